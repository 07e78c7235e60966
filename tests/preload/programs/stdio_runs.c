// Block and line calls of stdio in loops, for the runs the shim folds them
// into (io_stdio_runs_test.cpp), with calls and bytes the test knows:
//   fwrite.txt      kCalls fwrite of 10 bytes, one call site
//   fprintf.txt     kCalls fprintf of 9 bytes ("row 0042\n"), one site;
//                   then read back three times to the end: fgets, fread of
//                   9-byte records, getline (kCalls calls each, and one
//                   more that finds the end of the file)
//   interleaved.txt kCalls times fputs of 2 bytes then fputs of 3, two sites
//   fprintf.txt     opened read-only once more: one fwrite that fails (EBADF)
//   a pipe whose reader is gone (SIGPIPE ignored): an unbuffered fputs that
//                   fails (EPIPE)
//   a pipe whose reader (a child) waits until the pipe is full, sleeps
//                   kSleepMs and then drains it: one fwrite of kBig bytes,
//                   blocked at least that long
//   stdout          kCalls printf of 9 bytes ("out 0042\n"), then a summary
// Built twice: at -O0 -fno-builtin (the calls as written) and at -O2 with
// _FORTIFY_SOURCE=2 (SPOOR_FORTIFIED: __fprintf_chk, __printf_chk,
// __fgets_chk, __fread_chk, __getdelim).
//
// Usage: stdio_runs DIR
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kCalls = 1000, kBig = 256 * 1024, kSleepMs = 60 };

// Through volatile pointers: the compiler cannot turn fputs of a known
// string into fwrite or fputc.
static const char* volatile g_ten = "0123456789";
static const char* volatile g_two = "ab";
static const char* volatile g_three = "cde";
// Sizes the compiler cannot check at compile time: fortified, fgets and
// fread become __fgets_chk and __fread_chk.
static volatile int g_line_size = 64;
static volatile size_t g_record = 9;

#include "open_stream.h"

// The child at the other end of the pipe: waits until the pipe is full
// (the parent is then blocked inside its fwrite), sleeps, drains it.
static void slow_reader(int fd) {
  const int capacity = fcntl(fd, F_GETPIPE_SZ);
  for (int queued = 0; queued < capacity;) {
    if (ioctl(fd, FIONREAD, &queued) != 0) _exit(3);
    usleep(1000);
  }
  usleep(kSleepMs * 1000);
  char buf[65536];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  _exit(0);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_dir = argv[1];

  FILE* f = open_stream("fwrite.txt", "w");
  for (int i = 0; i < kCalls; ++i) fwrite(g_ten, 1, 10, f);
  fclose(f);

  f = open_stream("fprintf.txt", "w");
  for (int i = 0; i < kCalls; ++i) fprintf(f, "row %04d\n", i);
  fclose(f);

  f = open_stream("interleaved.txt", "w");
  for (int i = 0; i < kCalls; ++i) {
    fputs(g_two, f);
    fputs(g_three, f);
  }
  fclose(f);

  // Read back: fgets, fread, getline, each to the end of the file.
  char line[64];
  long fgets_calls = 1, fread_calls = 1, getline_calls = 1;
  f = open_stream("fprintf.txt", "r");
  while (fgets(line, g_line_size, f) != NULL) ++fgets_calls;
  fclose(f);
  f = open_stream("fprintf.txt", "r");
  while (fread(line, 1, g_record, f) == 9) ++fread_calls;
  fclose(f);
  f = open_stream("fprintf.txt", "r");
  char* text = NULL;
  size_t capacity = 0;
  while (getline(&text, &capacity, f) != -1) ++getline_calls;
  free(text);
  fclose(f);

  // A write to a read-only stream fails.
  f = open_stream("fprintf.txt", "r");
  errno = 0;
  const size_t wrote = fwrite(g_ten, 1, 10, f);
  const int write_errno = errno;
  fclose(f);

  // A write to a pipe without a reader fails (unbuffered: at the call).
  signal(SIGPIPE, SIG_IGN);
  int p[2];
  if (pipe(p) != 0) return 4;
  close(p[0]);
  f = fdopen(p[1], "w");
  setvbuf(f, NULL, _IONBF, 0);
  errno = 0;
  const int put = fputs(g_two, f);
  const int put_errno = errno;
  fclose(f);

  // A write bigger than the stdio buffer and the pipe, blocked until the
  // slow reader drains the pipe.
  if (pipe(p) != 0) return 4;
  const pid_t child = fork();
  if (child == 0) {
    close(p[1]);
    slow_reader(p[0]);
  }
  close(p[0]);
  f = fdopen(p[1], "w");
  char* big = calloc(kBig, 1);
  const size_t blocked = fwrite(big, 1, kBig, f);
  fclose(f);
  free(big);
  int status = 0;
  waitpid(child, &status, 0);

  for (int i = 0; i < kCalls; ++i) printf("out %04d\n", i);
  printf("fgets %ld fread %ld getline %ld\n", fgets_calls, fread_calls, getline_calls);
  printf("read-only fwrite: %zu, errno %s\n", wrote, write_errno == EBADF ? "EBADF" : "other");
  printf("fputs to a closed pipe: %s, errno %s\n", put == EOF ? "EOF" : "no EOF",
         put_errno == EPIPE ? "EPIPE" : "other");
  printf("blocked fwrite: %zu, reader %d\n", blocked, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
