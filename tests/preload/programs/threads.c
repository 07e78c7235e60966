/* Four threads that end four ways and are named three ways:
 *   returner  - named by main with pthread_setname_np, returns
 *   exiter    - names itself with prctl(PR_SET_NAME), calls pthread_exit
 *   cancelled - names itself with pthread_setname_np, is cancelled
 *   spinner   - names itself with prctl, spins in spin_cpu() for 300 ms of
 *               its own CPU time, then returns
 * With "report", prints each thread's tid, where spin_cpu is, and the CPU
 * time the spinner used; the last line is always "threads: done". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t named;  /* the returner waits until main named it */
static pid_t tids[4];
static long long spin_ns;

static long long thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* noipa: the loop must really run, here, in this function. The clock is
 * read every few milliseconds only, so most samples land in the loop. */
__attribute__((noipa)) double spin_cpu(long long ns) {
  const long long start = thread_cpu_ns();
  double x = 1;
  do {
    for (int i = 0; i < 2000000; ++i) x = x * 1.0000001 + 1e-9;
  } while (thread_cpu_ns() - start < ns);
  spin_ns = thread_cpu_ns() - start;
  return x;
}

static void* returner(void* arg) {
  (void)arg;
  tids[0] = (pid_t)syscall(SYS_gettid);
  pthread_barrier_wait(&named);
  return NULL;
}

static void* exiter(void* arg) {
  (void)arg;
  tids[1] = (pid_t)syscall(SYS_gettid);
  prctl(PR_SET_NAME, "exiter", 0, 0, 0);
  pthread_exit(NULL);
}

static void* cancelled(void* arg) {
  int* ready = arg;
  tids[2] = (pid_t)syscall(SYS_gettid);
  pthread_setname_np(pthread_self(), "cancelled");
  __atomic_store_n(ready, 1, __ATOMIC_RELEASE);
  for (;;) pause(); /* a cancellation point */
  return NULL;
}

static void* spinner(void* arg) {
  (void)arg;
  tids[3] = (pid_t)syscall(SYS_gettid);
  prctl(PR_SET_NAME, "spinner", 0, 0, 0);
  static volatile double sink;
  sink = spin_cpu(300 * 1000000LL);
  return NULL;
}

int main(int argc, char** argv) {
  const int report = argc > 1 && strcmp(argv[1], "report") == 0;
  pthread_t t[4];
  int ready = 0;
  pthread_barrier_init(&named, NULL, 2);
  pthread_create(&t[0], NULL, returner, NULL);
  pthread_setname_np(t[0], "returner");
  pthread_barrier_wait(&named);
  pthread_create(&t[1], NULL, exiter, NULL);
  pthread_create(&t[2], NULL, cancelled, &ready);
  pthread_create(&t[3], NULL, spinner, NULL);
  while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) usleep(1000);
  pthread_cancel(t[2]);
  for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
  if (report) {
    printf("main %d\nreturner %d\nexiter %d\ncancelled %d\nspinner %d\n", (int)getpid(), (int)tids[0],
           (int)tids[1], (int)tids[2], (int)tids[3]);
    printf("returner_fn %p\nspin_cpu %p\nspin_ns %lld\n", (void*)returner, (void*)spin_cpu, spin_ns);
  }
  printf("threads: done\n");
  return 0;
}
