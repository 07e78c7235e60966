// Spins in spin_here() (built with -fomit-frame-pointer) for the given
// milliseconds of CPU time, then writes its result to stdout: CPU samples
// must land in spin_here with registers and a stack copy to unwind from.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cpu_spin.h"

__attribute__((noinline)) double spin_here(long ms) {
  return spin_cpu_ms(ms);
}

int main(int argc, char** argv) {
  const long ms = argc > 1 ? atol(argv[1]) : 300;
  char line[64];
  const int n = snprintf(line, sizeof line, "%f\n", spin_here(ms));
  return write(1, line, (size_t)n) == n ? 0 : 1;
}
