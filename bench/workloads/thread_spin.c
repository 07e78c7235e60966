// Four threads spin in a shallow function for the given milliseconds of
// CPU each: how many stack bytes a kernel CPU sample of a thread (not the
// main thread, whose copy ends at the top of the process stack) stores for
// each --kernel-stack-size (bench/RESULTS.md, "Kernel samples: more than
// 16 KiB of user stack").
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long g_ms = 300;

static void* spin(void* arg) {
  struct timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile double x = 1.0;
  for (;;) {
    for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 0.0000001;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= g_ms) return arg;
  }
}

int main(int argc, char** argv) {
  if (argc > 1) g_ms = atol(argv[1]);
  pthread_t t[4];
  for (int i = 0; i < 4; ++i) pthread_create(&t[i], NULL, spin, NULL);
  for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
  return 0;
}
