/* A signal handler that allocates and writes while the main loop
 * allocates: under spoor record, most of its calls land while the main
 * thread is inside the shim's hooks. Each handler call makes one
 * malloc(4000) + free, one posix_memalign of 3000 bytes + free, and one
 * 1-byte write to /dev/null; the main loop mallocs and frees 100 bytes
 * until the handler has run N times (argument, default 2000).
 *
 * It also checks that sigaction and signal report the program's own
 * handlers back. Prints "handled H", then "ok" per check; exits 0 when all
 * passed, 1 otherwise. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile long handled;
static int devnull = -1;

static void on_alarm(int sig) {
  (void)sig;
  void* p = malloc(4000);
  memset(p, 1, 8);
  free(p);
  void* q = NULL;
  if (posix_memalign(&q, 64, 3000) == 0) free(q);
  if (write(devnull, "x", 1) != 1) abort();
  ++handled;
}

static void on_usr1(int sig) { (void)sig; }

int main(int argc, char** argv) {
  const long want = argc > 1 ? atol(argv[1]) : 2000;
  devnull = open("/dev/null", O_WRONLY);
  if (devnull < 0) return 1;
  int failed = 0;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGALRM, &sa, NULL) != 0) return 1;
  struct sigaction back;
  memset(&back, 0, sizeof back);
  sigaction(SIGALRM, NULL, &back);
  if (back.sa_handler == on_alarm && (back.sa_flags & SA_SIGINFO) == 0 && (back.sa_flags & SA_RESTART) != 0)
    puts("ok sigaction reports the handler");
  else
    failed = 1;
  signal(SIGUSR1, on_usr1);
  if (signal(SIGUSR1, SIG_DFL) == on_usr1) puts("ok signal reports the handler");
  else failed = 1;
  if (signal(SIGUSR1, SIG_IGN) == SIG_DFL) puts("ok signal reports SIG_DFL");
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
