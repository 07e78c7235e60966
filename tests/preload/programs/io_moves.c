/* File traffic the fd layer's newer hooks must account for, in directory
 * argv[1]:
 *   - copies stdin to stdout with read() and write() (the test redirects
 *     both to files, so they are inherited descriptors)
 *   - src.bin (1000 bytes, written with write) is copied to dst.bin with
 *     copy_file_range (1000 bytes), sendfile (1000 bytes) and, through a
 *     pipe, splice (300 bytes in, 300 out); tee copies those 300 bytes to a
 *     second pipe, read back with read() (300 bytes)
 *   - descriptors 200-203 (copies of one on src.bin) are closed with
 *     close_range, 900-903 with closefrom(900)
 * dst.bin ends 2300 bytes long. Prints "copied N" (bytes of stdin). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

static void check(int ok, const char* what) {
  if (!ok) {
    perror(what);
    _exit(2);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  char buf[4096];
  long copied = 0;
  ssize_t n;
  while ((n = read(0, buf, sizeof buf)) > 0) {
    check(write(1, buf, (size_t)n) == n, "write stdout");
    copied += n;
  }

  char src[4096], dst[4096];
  snprintf(src, sizeof src, "%s/src.bin", argv[1]);
  snprintf(dst, sizeof dst, "%s/dst.bin", argv[1]);
  memset(buf, 'x', 1000);
  int fd = open(src, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  check(fd >= 0 && write(fd, buf, 1000) == 1000, "src");
  close(fd);

  const int in = open(src, O_RDONLY);
  const int out = open(dst, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  check(in >= 0 && out >= 0, "open");
  check(copy_file_range(in, NULL, out, NULL, 1000, 0) == 1000, "copy_file_range");
  off_t at = 0;
  check(sendfile(out, in, &at, 1000) == 1000, "sendfile");
  int p[2], q[2];
  check(pipe(p) == 0 && pipe(q) == 0, "pipe");
  loff_t from = 0;
  check(splice(in, &from, p[1], NULL, 300, 0) == 300, "splice in");
  check(tee(p[0], q[1], 300, 0) == 300, "tee");
  check(splice(p[0], NULL, out, NULL, 300, 0) == 300, "splice out");
  check(read(q[0], buf, sizeof buf) == 300, "read tee");
  close(in);
  close(out);
  close(p[0]);
  close(p[1]);
  close(q[0]);
  close(q[1]);

  /* Copies at fixed numbers: the descriptors the program was given may
   * leave holes anywhere below. */
  const int f = open(src, O_RDONLY);
  check(f >= 0, "open for the ranges");
  for (int i = 0; i < 4; ++i) check(dup2(f, 200 + i) == 200 + i && dup2(f, 900 + i) == 900 + i, "dup2");
  close(f);
  check(close_range(200, 203, 0) == 0, "close_range");
  check(fcntl(203, F_GETFD) == -1, "close_range closed");
  closefrom(900);
  check(fcntl(900, F_GETFD) == -1, "closefrom closed");
  fprintf(stderr, "copied %ld\n", copied);
  return 0;
}
