/* Threads that block every signal, the way liblzma and many thread pools
 * start their workers: the creator blocks all signals around
 * pthread_create (the worker inherits the full mask), the worker blocks
 * all again itself, then burns CPU. Prints what each thread's mask says
 * of SIGINT and of SIGRTMAX-5 (the sampler's signal, see
 * preload/shim/samples.h), so a traced run must print the same, and
 * "worker: <tid>" on stderr for the test to find its samples. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double thread_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void report(const char* who) {
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  printf("%s: SIGINT %s, SIGRTMAX-5 %s\n", who, sigismember(&now, SIGINT) ? "blocked" : "open",
         sigismember(&now, SIGRTMAX - 5) ? "blocked" : "open");
}

static void* worker(void* unused) {
  (void)unused;
  report("worker, inherited");
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  report("worker, blocked again");
  const double until = thread_cpu_seconds() + 0.3;
  while (thread_cpu_seconds() < until)
    for (int i = 0; i < 10000; ++i) sink += (unsigned long)i * 7;
  fprintf(stderr, "worker: %ld\n", (long)syscall(SYS_gettid));
  return NULL;
}

int main(void) {
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  pthread_join(t, NULL);
  report("main, restored");
  return 0;
}
