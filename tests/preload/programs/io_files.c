/* File traffic known in advance, for the Spoor.IO tests. Usage: io_files DIR
 *
 * fd layer (every file is read back exactly once, in full):
 *   a.bin  write 1000 + pwrite 500 at 1000 + writev 100/200/300 = 2100 bytes;
 *          fsync, fdatasync; read back with read and pread; lseek to its end.
 *   b.bin  opened once, written only through copies of the descriptor: dup
 *          111, dup2 (fd 50) 222, fcntl F_DUPFD (>= 60) 333, F_DUPFD_CLOEXEC
 *          (>= 70) 44, dup3 (fd 80) 55 = 765 bytes, the original closed
 *          first; read back with readv.
 *   v.bin  pwritev 300 + 200 at 0; read back with preadv.
 * stdio layer:
 *   c.txt  fwrite 3000 + fputs 4 = 3004 bytes; read back with fread.
 *   d.txt  fprintf 100 lines + vfprintf 1; read back with fgets.
 *   e.txt  fdopen over an open()ed descriptor, fprintf; not read back.
 *   a memory stream (fmemopen), which has no descriptor.
 * errors: open and fopen of DIR/missing (ENOENT).
 *
 * Prints what it saw: the same with and without tracing. errno is set to a
 * marker before calls that succeed, which leave errno alone; the marker
 * must survive them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static char g_dir[4096];
static int g_errno_changed = 0;

static const char* in_dir(const char* name) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  return path;
}

static void marker(void) { errno = EDOM; }
static void check_marker(const char* what) {
  if (errno != EDOM) {
    printf("errno changed by %s: %d\n", what, errno);
    g_errno_changed = 1;
  }
}

static void fill(char* buf, size_t n, char c) { memset(buf, c, n); }

static void fd_layer(void) {
  char buf[4096];
  int fd = open(in_dir("a.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  fill(buf, sizeof buf, 'a');
  marker();
  ssize_t w = write(fd, buf, 1000);
  check_marker("write");
  w += pwrite(fd, buf, 500, 1000);
  struct iovec iov[3] = {{buf, 100}, {buf, 200}, {buf, 300}};
  if (lseek(fd, 1500, SEEK_SET) != 1500) printf("lseek failed\n");
  w += writev(fd, iov, 3);
  marker();
  if (fsync(fd) != 0 || fdatasync(fd) != 0) printf("sync failed\n");
  check_marker("fsync");
  close(fd);
  printf("a.bin written %zd\n", w);

  fd = open(in_dir("a.bin"), O_RDONLY);
  marker();
  ssize_t r = read(fd, buf, 700);
  check_marker("read");
  r += pread(fd, buf, sizeof buf, 700);
  printf("a.bin read %zd, size %lld\n", r, (long long)lseek(fd, 0, SEEK_END));
  close(fd);

  fd = open(in_dir("b.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int d1 = dup(fd);
  const int d2 = dup2(fd, 50);
  const int d3 = fcntl(fd, F_DUPFD, 60);
  const int d4 = fcntl(fd, F_DUPFD_CLOEXEC, 70);
  const int d5 = dup3(fd, 80, O_CLOEXEC);
  close(fd);
  fill(buf, sizeof buf, 'b');
  w = write(d1, buf, 111) + write(d2, buf, 222) + write(d3, buf, 333) + write(d4, buf, 44) +
      write(d5, buf, 55);
  /* Commands with an int, a pointer and no third argument go through. */
  struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
  printf("b.bin dups %d %d %d %d %d written %zd; cloexec %d %d; lock %d; access %d\n", d1 >= 0, d2,
         d3 >= 60, d4 >= 70, d5, w, fcntl(d3, F_GETFD), fcntl(d4, F_GETFD), fcntl(d1, F_SETLK, &lock),
         fcntl(d1, F_GETFL) & O_ACCMODE);
  close(d1), close(d2), close(d3), close(d4), close(d5);

  fd = open(in_dir("b.bin"), O_RDONLY);
  struct iovec halves[2] = {{buf, 400}, {buf + 400, 400}};
  printf("b.bin read %zd\n", readv(fd, halves, 2));
  close(fd);

  fd = open(in_dir("v.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  struct iovec parts[2] = {{buf, 300}, {buf, 200}};
  w = pwritev(fd, parts, 2, 0);
  struct iovec whole[2] = {{buf, 250}, {buf + 250, 1000}};
  printf("v.bin written %zd read %zd\n", w, preadv(fd, whole, 2, 0));
  close(fd);

  errno = 0;
  fd = open(in_dir("missing"), O_RDONLY);
  printf("missing: fd %d errno %s\n", fd, errno == ENOENT ? "ENOENT" : "other");
}

static int formatted(FILE* f, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int n = vfprintf(f, format, ap);
  va_end(ap);
  return n;
}

static void stdio_layer(void) {
  char buf[4096];
  FILE* f = fopen(in_dir("c.txt"), "w");
  fill(buf, 3000, 'c');
  marker();
  size_t w = fwrite(buf, 1, 3000, f);
  check_marker("fwrite");
  if (fputs("end\n", f) < 0) printf("fputs failed\n");
  fflush(f);
  fclose(f);

  f = fopen(in_dir("c.txt"), "r");
  size_t r = 0, n;
  while ((n = fread(buf, 1, 1024, f)) > 0) r += n;
  fclose(f);
  printf("c.txt written %zu+4 read %zu\n", w, r);

  f = fopen(in_dir("d.txt"), "w");
  int wrote = 0;
  for (int i = 0; i < 100; ++i) wrote += fprintf(f, "line %d\n", i);
  wrote += formatted(f, "%s-%d\n", "tail", 7);
  fclose(f);
  f = fopen(in_dir("d.txt"), "r");
  r = 0;
  while (fgets(buf, sizeof buf, f) != NULL) r += strlen(buf);
  fclose(f);
  printf("d.txt written %d read %zu\n", wrote, r);

  const int fd = open(in_dir("e.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  f = fdopen(fd, "w");
  wrote = fprintf(f, "%s\n", "through fdopen");
  fclose(f);
  printf("e.txt written %d\n", wrote);

  /* fileno() of a stream without a descriptor sets errno: the shim's
   * recording must not let that reach the program. */
  char memory[64];
  f = fmemopen(memory, sizeof memory, "w");
  marker();
  if (fwrite("abc", 1, 3, f) != 3) printf("fwrite to memory failed\n");
  check_marker("fwrite to a memory stream");
  fclose(f);
  check_marker("fclose of a memory stream");

  errno = 0;
  f = fopen(in_dir("missing"), "r");
  printf("missing stream %s errno %s\n", f == NULL ? "null" : "open", errno == ENOENT ? "ENOENT" : "other");
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
  fd_layer();
  stdio_layer();
  printf("errno %s\n", g_errno_changed ? "changed" : "kept");
  return 0;
}
