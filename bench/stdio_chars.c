// spoor_bench_stdio_chars: a program that writes or reads one character,
// or one line, per stdio call, timed as a whole process plain and under
// spoor record (bench/RESULTS.md, "stdio character calls", "stdio runs"):
//
//   spoor_bench_stdio_chars putc 20000000 /dev/null    # putc to a stream
//   spoor_bench_stdio_chars getc 0 FILE                # getc to its end
//   spoor_bench_stdio_chars copy 0 FILE                # getc, putc to /dev/null
//   spoor_bench_stdio_chars printf 1000000 - >/dev/null  # printf of a short line
//   spoor_bench_stdio_chars fgets 0 FILE               # fgets, line by line
//   time spoor record -o t.spoor -- spoor_bench_stdio_chars putc ...
//
// Built without optimization of the calls away: putc and getc stay calls
// into libc (the shim's hooks), as in a program built with -O0 or calling
// through a function pointer. Prints the characters moved, so the loop is
// not dropped. A benchmark, not a test: exit status 0 (2: bad usage).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s putc N FILE | getc 0 FILE | copy 0 FILE | printf N - | fgets 0 FILE\n",
            argv[0]);
    return 2;
  }
  const long n = atol(argv[2]);
  long moved = 0;
  if (strcmp(argv[1], "putc") == 0) {
    FILE* out = fopen(argv[3], "w");
    if (out == NULL) return 2;
    for (long i = 0; i < n; ++i) moved += putc('a' + (int)(i % 26), out) != EOF;
    fclose(out);
  } else if (strcmp(argv[1], "getc") == 0) {
    FILE* in = fopen(argv[3], "r");
    if (in == NULL) return 2;
    while (getc(in) != EOF) ++moved;
    fclose(in);
  } else if (strcmp(argv[1], "copy") == 0) {  // two call sites on two streams, in turn
    FILE* in = fopen(argv[3], "r");
    FILE* out = fopen("/dev/null", "w");
    if (in == NULL || out == NULL) return 2;
    for (int c; (c = getc(in)) != EOF;) moved += putc(c, out) != EOF;
    fclose(out);
    fclose(in);
  } else if (strcmp(argv[1], "printf") == 0) {  // "line 123456\n" to stdout (FILE: "-"; redirect it)
    for (long i = 0; i < n; ++i) {
      const int wrote = printf("line %ld\n", i);
      if (wrote > 0) moved += wrote;
    }
  } else if (strcmp(argv[1], "fgets") == 0) {
    FILE* in = fopen(argv[3], "r");
    if (in == NULL) return 2;
    char line[256];
    while (fgets(line, sizeof line, in) != NULL) moved += (long)strlen(line);
    fclose(in);
  } else {
    return 2;
  }
  printf("%s: %ld characters\n", argv[1], moved);
  return 0;
}
