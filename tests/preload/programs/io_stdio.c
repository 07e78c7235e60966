// Every call of the stdio layer that writes or reads the program's own
// output and lines, each with a byte count the test knows
// (io_stdio_test.cpp). Built twice: at -O0 -fno-builtin (the calls as
// written) and at -O2 with _FORTIFY_SOURCE=2 (SPOOR_FORTIFIED: what the
// compiler turns them into: __printf_chk, puts, __vfprintf_chk,
// __dprintf_chk, __getdelim; the _unlocked character calls are inlined
// there and left out).
//
// Usage: io_stdio DIR < INPUT. stdout is phases separated by fflush(stdout)
// (the test splits the trace's stdout events at each FFlush).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// glibc's old names, which binaries built against old headers call.
int _IO_putc(int c, FILE* stream);
int _IO_getc(FILE* stream);

enum { kChars = 100000, kEvery = 1000, kLines = 40, kFormatted = 10 };

#include "open_stream.h"

static int open_fd(const char* name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    exit(1);
  }
  return fd;
}

static void formatted(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  vprintf(format, ap);
  va_end(ap);
}

static void formatted_to(int fd, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  vdprintf(fd, format, ap);
  va_end(ap);
}

// Reads `stream` to its end with getc: the calls made, EOF's included.
static long drain_with_getc(FILE* stream) {
  long calls = 1;
  while (getc(stream) != EOF) ++calls;
  return calls;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_dir = argv[1];

  // --- character output -------------------------------------------------------
  // A putc loop, interleaved with fputc from other call sites: one on the
  // same stream, one on another.
  FILE* chars = open_stream("chars.txt", "w");
  FILE* marks = open_stream("marks.txt", "w");
  for (int i = 0; i < kChars; ++i) {
    putc('a' + i % 26, chars);
    if (i % kEvery == kEvery - 1) {
      fputc('\n', chars);
      fputc('|', marks);
    }
  }
  fclose(marks);
  fclose(chars);
  FILE* old_name = open_stream("io_putc.txt", "w");
  for (int i = 0; i < 300; ++i) _IO_putc('o', old_name);
  fclose(old_name);
#ifndef SPOOR_FORTIFIED
  FILE* unlocked = open_stream("unlocked.txt", "w");
  for (int i = 0; i < 200; ++i) putc_unlocked('u', unlocked);
  for (int i = 0; i < 100; ++i) fputc_unlocked('v', unlocked);
  fclose(unlocked);
#endif
  FILE* peek = open_stream("peek.txt", "w");
  fputs("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", peek);  // 64 bytes
  fclose(peek);
  FILE* lines = open_stream("lines.txt", "w");
  for (int i = 0; i < kLines; ++i) fprintf(lines, "line %d of %d\n", i, kLines);
  fclose(lines);

  // --- stdout, one phase per function -----------------------------------------
  for (int i = 0; i < kFormatted; ++i) printf("printf %03d\n", i);  // 11 bytes each
  printf("plain\n");  // becomes puts under optimization: still one event, 6 bytes
  fflush(stdout);
  for (int i = 0; i < kFormatted; ++i) formatted("vprintf %03d\n", i);  // 12 bytes
  fflush(stdout);
  for (int i = 0; i < kFormatted; ++i) puts("puts line");  // 10 bytes with the newline
  fflush(stdout);
  for (int i = 0; i < 1000; ++i) putchar(i % 50 == 49 ? '\n' : 'c');
  fflush(stdout);
#ifndef SPOOR_FORTIFIED
  for (int i = 0; i < 500; ++i) putchar_unlocked(i % 50 == 49 ? '\n' : 'd');
#endif
  fflush(stdout);

  // --- printf to a descriptor -------------------------------------------------
  const int dfd = open_fd("dprintf.txt");
  for (int i = 0; i < kFormatted; ++i) dprintf(dfd, "dprintf %03d\n", i);  // 12 bytes
  close(dfd);
  const int vfd = open_fd("vdprintf.txt");
  for (int i = 0; i < kFormatted; ++i) formatted_to(vfd, "vdprintf %03d\n", i);  // 13 bytes
  close(vfd);

  // --- character input --------------------------------------------------------
  FILE* in = open_stream("chars.txt", "r");
  const long getc_calls = drain_with_getc(in);
  fclose(in);
  // The copy loop: getc and putc from two sites, on two streams, in turn.
  in = open_stream("chars.txt", "r");
  FILE* copy = open_stream("copy.txt", "w");
  for (int c; (c = getc(in)) != EOF;) putc(c, copy);
  fclose(copy);
  fclose(in);
  // A peek before each read (as libstdc++'s synced std::cin does): every
  // character is read twice and given back once.
  in = open_stream("peek.txt", "r");
  for (int c; (c = getc(in)) != EOF;) {
    ungetc(c, in);
    getc(in);
  }
  fclose(in);
  in = open_stream("marks.txt", "r");
  long fgetc_calls = 1;
  while (fgetc(in) != EOF) ++fgetc_calls;
  fclose(in);
  in = open_stream("io_putc.txt", "r");
  long io_getc_calls = 1;
  while (_IO_getc(in) != EOF) ++io_getc_calls;
  fclose(in);
#ifndef SPOOR_FORTIFIED
  // One stream, three call sites in turn: three runs.
  in = open_stream("unlocked.txt", "r");
  for (int i = 0; i < 150; ++i) getc_unlocked(in);
  for (int i = 0; i < 100; ++i) fgetc_unlocked(in);
  long rest = 1;
  while (getc(in) != EOF) ++rest;
  fclose(in);
  if (rest != 51) return 3;
#endif
  long getchar_calls = 1;
#ifndef SPOOR_FORTIFIED
  for (int i = 0; i < 100; ++i, ++getchar_calls) getchar_unlocked();
#endif
  while (getchar() != EOF) ++getchar_calls;

  // --- lines ------------------------------------------------------------------
  in = open_stream("lines.txt", "r");
  char* line = NULL;
  size_t capacity = 0;
  long line_calls = 1;
  while (getline(&line, &capacity, in) != -1) ++line_calls;
  fclose(in);
  in = open_stream("lines.txt", "r");
  long delim_calls = 1;
  while (getdelim(&line, &capacity, ' ', in) != -1) ++delim_calls;
  fclose(in);
  free(line);

  // --- a failing character call -----------------------------------------------
  in = open_stream("lines.txt", "r");
  errno = 0;
  const int failed = fputc('x', in);
  const int failed_errno = errno;
  fclose(in);

  printf("getc %ld fgetc %ld _IO_getc %ld getchar %ld getline %ld getdelim %ld\n", getc_calls, fgetc_calls,
         io_getc_calls, getchar_calls, line_calls, delim_calls);
  printf("fputc on a read-only stream: %s, errno %s\n", failed == EOF ? "EOF" : "no EOF",
         failed_errno == EBADF ? "EBADF" : "other");
  return 0;
}
