/* Temporary files with byte counts known in advance, for the I/O section of
 * spoor report (argv[1]: a directory to make them in):
 *   DIR/spillXXXXXX     mkstemp; 1000 bytes by write, then 234 through
 *                       fdopen + fwrite; closed; opened again by its name
 *                       and all 1234 bytes read back by read
 *   DIR/sXXXXXX.txt     mkostemps (suffix 4, O_CLOEXEC); 50 bytes by write
 *   tmpfile()           300 bytes through fwrite, then fclose
 * The names chosen are printed, one per line, for the test to find. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buffer[2000];

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  char spill[4096], suffixed[4096];
  snprintf(spill, sizeof spill, "%s/spillXXXXXX", argv[1]);
  snprintf(suffixed, sizeof suffixed, "%s/sXXXXXX.txt", argv[1]);

  int fd = mkstemp(spill);
  if (fd < 0 || write(fd, buffer, 1000) != 1000) return 1;
  FILE* stream = fdopen(fd, "w");
  if (stream == NULL || fwrite(buffer, 1, 234, stream) != 234 || fclose(stream) != 0) return 1;
  fd = open(spill, O_RDONLY);
  size_t total = 0;
  ssize_t n;
  while (fd >= 0 && (n = read(fd, buffer, sizeof buffer)) > 0) total += (size_t)n;
  if (fd < 0 || total != 1234 || close(fd) != 0) return 1;

  fd = mkostemps(suffixed, 4, O_CLOEXEC);
  if (fd < 0 || write(fd, buffer, 50) != 50 || close(fd) != 0) return 1;

  FILE* anonymous = tmpfile();
  if (anonymous == NULL || fwrite(buffer, 1, 300, anonymous) != 300 || fclose(anonymous) != 0) return 1;

  printf("%s\n%s\n", spill, suffixed);
  return 0;
}
