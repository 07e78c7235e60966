/* Asks for its own thread's attributes first thing, in main and in a new
 * thread, as Rust's runtime does: glibc's pthread_getattr_np allocates
 * (fopen of /proc/self/maps for the main thread, the CPU set for any)
 * while it holds the thread's lock, so a recorder that looked the stack
 * up from inside that allocation would wait on the lock forever. Prints
 * whether each thread found its stack. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int stack_found(void) {
  pthread_attr_t attr;
  void* base = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  return base != NULL && size > 0;
}

static void* thread_main(void* unused) {
  (void)unused;
  const int found = stack_found();
  void* p = malloc(100);
  free(p);
  return (void*)(long)found;
}

int main(void) {
  const int main_found = stack_found();
  pthread_t t;
  void* thread_found = NULL;
  if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, &thread_found) != 0) return 1;
  printf("main: %d, thread: %ld\n", main_found, (long)thread_found);
  return 0;
}
