/* Ends the process while worker threads still run, one of four ways (argv[1]):
 *   main-exit    - main calls exit(5) while two workers block
 *   main-return  - main returns 6 while two workers block
 *   worker-exit  - a worker calls exit(7) while main and the other block
 *   worker-_exit - a worker calls _exit(8) (no destructors run)
 * Prints "main TID" and "worker TID" lines first, flushed, so the tids
 * are known whatever the ending. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_barrier_t started;
static const char* how;

static void* worker(void* arg) {
  const int ender = arg != NULL;
  printf("worker %ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  pthread_barrier_wait(&started);
  if (ender && strcmp(how, "worker-exit") == 0) exit(7);
  if (ender && strcmp(how, "worker-_exit") == 0) _exit(8);
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  how = argc > 1 ? argv[1] : "main-exit";
  printf("main %ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  pthread_barrier_init(&started, NULL, 3);
  pthread_t t[2];
  const int worker_ends = strncmp(how, "worker", 6) == 0;
  pthread_create(&t[0], NULL, worker, NULL);
  pthread_create(&t[1], NULL, worker, worker_ends ? (void*)1 : NULL);
  pthread_barrier_wait(&started);
  if (strcmp(how, "main-exit") == 0) exit(5);
  if (strcmp(how, "main-return") == 0) return 6;
  for (;;) pause();
}
