/* Threads that block every signal, the way liblzma and many thread pools
 * start their workers: the creator blocks all signals around
 * pthread_create (the worker inherits the full mask), the worker blocks
 * all again itself, then burns CPU. Prints what each thread's mask says
 * of SIGINT and of SIGRTMAX-5 (the sampler's signal, see
 * preload/shim/samples.h), so a traced run must print the same, and
 * "worker: <tid>" on stderr for the test to find its samples. With
 * "exec", it blocks every signal and execs itself: the new image's main
 * thread starts blocked, and burns CPU there ("execd: <tid>"). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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

static void burn(double seconds);

static void* worker(void* unused) {
  (void)unused;
  report("worker, inherited");
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  report("worker, blocked again");
  burn(0.3);
  fprintf(stderr, "worker: %ld\n", (long)syscall(SYS_gettid));
  return NULL;
}

static void burn(double seconds) {
  const double until = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < until)
    for (int i = 0; i < 10000; ++i) sink += (unsigned long)i * 7;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "exec") == 0) {
    /* An image started with every signal blocked: the mask survives the
     * exec, and the burn runs on the main thread. */
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    fflush(stdout);
    execl(argv[0], argv[0], "execd", (char*)NULL);
    return 1;
  }
  if (argc > 1 && strcmp(argv[1], "execd") == 0) {
    report("execd main, as started");
    burn(0.3);
    fprintf(stderr, "execd: %ld\n", (long)syscall(SYS_gettid));
    return 0;
  }
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
