// Reads a file to its end with getc_unlocked, which glibc's headers inline
// at -O2 (this program is built so): libc is called only through __uflow,
// when the stream's buffer is empty. A peek with ungetc midway reads the
// pushed-back byte from the stream's backup area. Prints the bytes read.
//
// Usage: inline_getc FILE
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* in = fopen(argv[1], "r");
  if (in == NULL) return 1;
  long bytes = 0;
  for (int c; (c = getc_unlocked(in)) != EOF;) {
    ++bytes;
    if (bytes == 5000) {
      const int next = getc_unlocked(in);
      if (next != EOF) ungetc(next, in);
    }
  }
  fclose(in);
  printf("%ld\n", bytes);
  return 0;
}
