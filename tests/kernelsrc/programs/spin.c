// Spins in spin_here() (built with -fomit-frame-pointer) for the given
// milliseconds of CPU time, then writes its result to stdout: CPU samples
// must land in spin_here with registers and a stack copy to unwind from.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) double spin_here(long ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  double x = 1.0;
  for (;;) {
    for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 0.0000001;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= ms) return x;
  }
}

int main(int argc, char** argv) {
  const long ms = argc > 1 ? atol(argv[1]) : 300;
  char line[64];
  const int n = snprintf(line, sizeof line, "%f\n", spin_here(ms));
  return write(1, line, (size_t)n) == n ? 0 : 1;
}
