/* A program whose trace content is known, for spoor export's tests:
 *   - leak_site() allocates 10 blocks of 1000 bytes and never frees them;
 *   - churn_site() allocates 5 blocks of 200 bytes and frees them;
 *   - a thread named "writer" writes 3 times to a file (3 Write slices);
 *   - burn_cpu() spins for about 300 ms of CPU time: the top function of
 *     the CPU samples.
 * Prints nothing; exits 0. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void* leak_site(size_t n) {
  void* p = malloc(n);
  __asm__ volatile("" ::: "memory"); /* no tail call: the frame stays */
  return p;
}

__attribute__((noinline)) void churn_site(void) {
  void* blocks[5];
  for (int i = 0; i < 5; ++i) blocks[i] = malloc(200);
  __asm__ volatile("" ::: "memory");
  for (int i = 0; i < 5; ++i) free(blocks[i]);
}

static void* writer(void* path) {
  pthread_setname_np(pthread_self(), "writer");
  int fd = open((const char*)path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return NULL;
  for (int i = 0; i < 3; ++i)
    if (write(fd, "0123456789", 10) != 10) break;
  close(fd);
  return NULL;
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

volatile unsigned long g_sink;

__attribute__((noinline)) void burn_cpu(double seconds) {
  const double until = cpu_seconds() + seconds;
  while (cpu_seconds() < until)
    for (unsigned long i = 0; i < 100000; ++i) g_sink += i * i;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/dev/null";
  static void* leaked[10];
  for (int i = 0; i < 10; ++i) leaked[i] = leak_site(1000);
  churn_site();
  pthread_t t;
  if (pthread_create(&t, NULL, writer, (void*)path) == 0) pthread_join(t, NULL);
  burn_cpu(0.3);
  return leaked[0] == NULL;
}
