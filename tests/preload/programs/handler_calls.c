/* A signal handler that allocates and writes while the main loop
 * allocates: under spoor record, most of its calls land while the main
 * thread is inside the shim's hooks. Each handler call makes one
 * malloc(4000) + free, one posix_memalign of 3000 bytes + free, one mmap
 * of 12 KiB + munmap, one 1-byte write to /dev/null and one fflush of a
 * stream on /dev/null; the
 * main loop mallocs and frees 100 bytes until the handler has run N times
 * (argument, default 2000).
 *
 * The handler is installed with sigaction, or with the function named by
 * the second argument (sigset, bsd_signal). It also checks that sigaction,
 * signal, sysv_signal, bsd_signal and sigset report the program's own
 * handlers back, and that a handler a vfork child installs before its exec
 * stays the child's. Prints "ok" per check, then "handled H"; exits 0 when all
 * passed, 1 otherwise. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "set_handler.h"

/* In libc, no longer declared by its headers; sigset is deprecated there. */
extern __sighandler_t bsd_signal(int sig, __sighandler_t handler);
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static volatile long handled;
static int devnull = -1;
static FILE* devnull_stream;

static void on_alarm(int sig) {
  (void)sig;
  void* p = malloc(4000);
  memset(p, 1, 8);
  free(p);
  void* q = NULL;
  if (posix_memalign(&q, 64, 3000) == 0) free(q);
  void* m = mmap(NULL, 12288, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) abort();
  munmap(m, 12288);
  if (write(devnull, "x", 1) != 1) abort();
  fflush(devnull_stream); /* the main loop never uses the stream */
  ++handled;
}

static void on_usr1(int sig) { (void)sig; }

static volatile sig_atomic_t parent_handled, child_handler_ran;
static void parent_usr1(int sig) {
  (void)sig;
  parent_handled = 1;
}
static void child_usr1(int sig) {
  (void)sig;
  child_handler_ran = 1;
}

int main(int argc, char** argv) {
  const long want = argc > 1 ? atol(argv[1]) : 2000;
  const char* installer = argc > 2 ? argv[2] : "sigaction";
  devnull = open("/dev/null", O_WRONLY);
  if (devnull < 0) return 1;
  devnull_stream = fdopen(dup(devnull), "w");
  if (devnull_stream == NULL) return 1;
  int failed = 0;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  if (strcmp(installer, "sigset") == 0) {
    if (sigset(SIGALRM, on_alarm) != SIG_DFL) failed = 1;
  } else if (strcmp(installer, "bsd_signal") == 0) {
    if (bsd_signal(SIGALRM, on_alarm) != SIG_DFL) failed = 1;
  } else if (sigaction(SIGALRM, &sa, NULL) != 0) {
    return 1;
  }
  struct sigaction back;
  memset(&back, 0, sizeof back);
  sigaction(SIGALRM, NULL, &back);
  if (back.sa_handler == on_alarm && (back.sa_flags & SA_SIGINFO) == 0)
    puts("ok sigaction reports the handler");
  else
    failed = 1;
  /* System V's: reset on delivery. */
  sysv_signal(SIGUSR2, on_usr1);
  memset(&back, 0, sizeof back);
  sigaction(SIGUSR2, NULL, &back);
  if (back.sa_handler == on_usr1 && (back.sa_flags & SA_RESETHAND) != 0 && (back.sa_flags & SA_SIGINFO) == 0)
    puts("ok sysv_signal reports the handler");
  else
    failed = 1;
  if (sigset(SIGUSR2, SIG_HOLD) == on_usr1 && sigset(SIGUSR2, SIG_DFL) == SIG_HOLD)
    puts("ok sigset holds and releases");
  else
    failed = 1;
  if (bsd_signal(SIGUSR2, on_usr1) == SIG_DFL && bsd_signal(SIGUSR2, SIG_DFL) == on_usr1)
    puts("ok bsd_signal reports the handler");
  else
    failed = 1;
  signal(SIGUSR1, on_usr1);
  if (signal(SIGUSR1, SIG_DFL) == on_usr1) puts("ok signal reports the handler");
  else failed = 1;
  if (signal(SIGUSR1, SIG_IGN) == SIG_DFL) puts("ok signal reports SIG_DFL");
  else failed = 1;

  set_handler(SIGUSR1, parent_usr1);
  const pid_t child = vfork();
  if (child == 0) {
    set_handler(SIGUSR1, child_usr1);
    _exit(0);
  }
  waitpid(child, NULL, 0);
  raise(SIGUSR1);
  if (parent_handled && !child_handler_ran) puts("ok a vfork child's handler stays its own");
  else failed = 1;

  struct itimerval every = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &every, NULL);
  long loops = 0;
  while (handled < want) {
    void* p = malloc(100);
    memset(p, 0, 8);
    free(p);
    ++loops;
    /* Some work between the calls: events at a rate the recorder drains
     * on any machine, so that a full ring loses none. */
    for (volatile int spin = 0; spin < 300; ++spin) {
    }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("handled %ld\n", handled);
  fprintf(stderr, "main loop: %ld allocations\n", loops);
  return failed;
}
