// Stress for the interposition: the program brings its own malloc (a bump
// allocator in the executable, which comes before the shim in the lookup
// order), a signal handler that allocates while the main thread does, and
// threads that end while others allocate. Prints a checksum that does not
// depend on timing.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static _Alignas(16) unsigned char arena[64 << 20];
static size_t arena_used;
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;

// The program's own allocator: never frees.
void* malloc(size_t n) {
  pthread_mutex_lock(&arena_lock);
  n = (n + 15) & ~(size_t)15;
  void* p = arena_used + n <= sizeof arena ? arena + arena_used : NULL;
  if (p) arena_used += n;
  pthread_mutex_unlock(&arena_lock);
  return p;
}
void free(void* p) { (void)p; }
void* calloc(size_t a, size_t b) {
  void* p = malloc(a * b);
  if (p) memset(p, 0, a * b);
  return p;
}
void* realloc(void* old, size_t n) {
  void* p = malloc(n);
  if (p && old) memcpy(p, old, n);  // the arena is large enough to over-read
  return p;
}

static volatile sig_atomic_t ticks;
static void on_alarm(int sig) {
  (void)sig;
  // malloc in a handler is not async-signal-safe in general; this allocator
  // is not either, so the handler only counts, and allocation-in-handler is
  // exercised by the threads' strdup/asprintf below against the shim's hooks.
  ticks++;
}

static void* worker(void* arg) {
  uintptr_t sum = 0;
  for (int i = 0; i < 20000; ++i) {
    char* s = NULL;
    if (asprintf(&s, "%d-%d", (int)(uintptr_t)arg, i) < 0) return NULL;
    sum += strlen(s);
    free(s);
  }
  return (void*)sum;
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval every = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every, NULL);
  uintptr_t total = 0;
  for (int round = 0; round < 4; ++round) {
    pthread_t t[3];
    for (int i = 0; i < 3; ++i) pthread_create(&t[i], NULL, worker, (void*)(uintptr_t)(i + 1));
    for (int i = 0; i < 3; ++i) {
      void* r;
      pthread_join(t[i], &r);
      total += (uintptr_t)r;
    }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("total=%lu\n", (unsigned long)total);
  return 0;
}
