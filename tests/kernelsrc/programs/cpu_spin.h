/* Burns `ms` milliseconds of the calling thread's CPU time in a loop of
 * arithmetic and returns its result (so the loop is kept). always_inline:
 * the spinning code is the caller's, where the tests expect the samples. */
#ifndef SPOOR_TESTS_KERNELSRC_PROGRAMS_CPU_SPIN_H
#define SPOOR_TESTS_KERNELSRC_PROGRAMS_CPU_SPIN_H

#include <time.h>

static inline __attribute__((always_inline)) double spin_cpu_ms(long ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  double x = 1.0;
  for (;;) {
    for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 0.0000001;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= ms) return x;
  }
}

#endif
