// Many short threads, each making a few allocations: what tracing costs a
// program that starts threads all the time (a server's per-request
// threads, a thread pool that shrinks and grows). Each round starts 100
// threads and joins them; each thread mallocs and frees 20 blocks.
//
//   spoor_workload_thread_churn [rounds]     (default 50: 5,000 threads)
//
// Prints "thread_churn: threads=N seconds=S"; exit 0, 1 when a thread
// cannot be started.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void* work(void* arg) {
  for (int i = 0; i < 20; ++i) {
    void* volatile block = malloc(64 + (size_t)i * 8);
    free(block);
  }
  return arg;
}

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 50;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long round = 0; round < rounds; ++round) {
    pthread_t threads[100];
    for (int i = 0; i < 100; ++i)
      if (pthread_create(&threads[i], NULL, work, NULL) != 0) return 1;
    for (int i = 0; i < 100; ++i) pthread_join(threads[i], NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  printf("thread_churn: threads=%ld seconds=%.3f\n", rounds * 100,
         (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9);
  return 0;
}
