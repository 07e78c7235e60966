/* A thread cancelled while blocked in read(), a cancellation point: the
 * forced unwind starts inside the shim's read hook, which holds nothing
 * across the real call, so the thread ends as it would without the shim.
 * Prints "cancelled 1". */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int g_pipe[2];

static void* reader(void* arg) {
  char c;
  (void)arg;
  if (read(g_pipe[0], &c, 1) < 0) return NULL;  /* blocks: nothing is written */
  return NULL;
}

int main(void) {
  if (pipe(g_pipe) != 0) return 2;
  pthread_t thread;
  if (pthread_create(&thread, NULL, reader, NULL) != 0) return 2;
  usleep(50000);  /* not needed for correctness: cancelling earlier works too */
  pthread_cancel(thread);
  void* result;
  pthread_join(thread, &result);
  printf("cancelled %d\n", result == PTHREAD_CANCELED);
  return 0;
}
