// A fixed amount of CPU work (no I/O, no allocation) through a few levels
// of calls, for sampling overhead: run untraced and under a sampler, the
// difference in its elapsed time is the sampler's cost. Built with the
// compiler's defaults (no frame pointers), as Debian builds programs.
// Prints the seconds its work took, wall and its own CPU (user + system:
// a sampler's interrupts and stack copies are charged to it).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t seed, int n) {
  uint64_t h = seed;
  for (int i = 0; i < n; ++i) h = mix(h + (uint64_t)i);
  return h;
}

__attribute__((noinline)) static uint64_t middle(uint64_t seed, int depth) {
  if (depth == 0) return leaf(seed, 2000);
  return middle(mix(seed), depth - 1) ^ leaf(seed, 500);
}

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? atol(argv[1]) : 20000;
  const double start = now();
  uint64_t h = 1;
  for (long r = 0; r < rounds; ++r) h ^= middle(h + (uint64_t)r, 4);
  const double wall = now() - start;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                     (double)ru.ru_stime.tv_usec / 1e6;
  printf("wall %.4f cpu %.4f (%llx)\n", wall, cpu, (unsigned long long)(h & 0xff));
  return 0;
}
