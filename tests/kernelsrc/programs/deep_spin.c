// Recurses 48 levels deep with a 1 KiB frame each, then spins for the given
// milliseconds of CPU time at the bottom: every CPU sample then has about
// 48 KiB of live stack above its sp, more than one Blob of a trace holds.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_spin.h"

static double spin(long ms) {
  return spin_cpu_ms(ms);
}

// The frame's buffer is written and read so the compiler keeps it.
__attribute__((noinline)) double descend(int depth, long ms) {
  volatile char frame[1024];
  memset((char*)frame, depth, sizeof frame);
  const double x = depth == 0 ? spin(ms) : descend(depth - 1, ms);
  return x + frame[depth % sizeof frame];
}

int main(int argc, char** argv) {
  const long ms = argc > 1 ? atol(argv[1]) : 300;
  char line[64];
  const int n = snprintf(line, sizeof line, "%f\n", descend(48, ms));
  return write(1, line, (size_t)n) == n ? 0 : 1;
}
