/* Built with -O2 -D_FORTIFY_SOURCE=2, so that its calls go to glibc's
 * checking forms: __open_2 and __openat_2 (flags not known at compile
 * time), __read_chk and __pread_chk, __fgets_chk and __fread_chk (sizes
 * not known at compile time), __fprintf_chk and __vfprintf_chk.
 * Usage: io_fortify DIR. Writes DIR/f.txt, then reads it in full four
 * times: read, pread (through openat), fgets, fread. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int formatted(FILE* f, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int n = vfprintf(f, format, ap);
  va_end(ap);
  return n;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/f.txt", argv[1]);
  /* Known only at run time: the fortified wrappers cannot resolve them. */
  const int read_only = argc > 5 ? O_RDWR : O_RDONLY;
  const size_t chunk = (size_t)(argc + 62);  /* 64 */

  FILE* f = fopen(path, "w");
  int wrote = 0;
  for (int i = 0; i < 50; ++i) wrote += fprintf(f, "fortified line %d\n", i);
  wrote += formatted(f, "%s %d\n", "last", 50);
  fclose(f);

  char buf[256];
  int fd = open(path, read_only);
  ssize_t n, by_read = 0;
  while ((n = read(fd, buf, chunk)) > 0) by_read += n;
  close(fd);

  const int dir = open(argv[1], read_only | O_DIRECTORY);
  fd = openat(dir, "f.txt", read_only);
  ssize_t by_pread = 0;
  while ((n = pread(fd, buf, chunk, by_pread)) > 0) by_pread += n;
  close(fd);
  close(dir);

  f = fopen(path, "r");
  size_t by_fgets = 0;
  while (fgets(buf, (int)chunk, f) != NULL) by_fgets += strlen(buf);
  fclose(f);

  f = fopen(path, "r");
  size_t got, by_fread = 0;
  while ((got = fread(buf, 1, chunk, f)) > 0) by_fread += got;
  fclose(f);

  printf("wrote %d read %zd pread %zd fgets %zu fread %zu\n", wrote, by_read, by_pread, by_fgets, by_fread);
  return 0;
}
