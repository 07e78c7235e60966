/* Counts the SIGINTs it gets: prints "ready" once its handler is in, then
 * waits until half a second after the first SIGINT (at most 20 s) and
 * prints "sigint N". Under spoor record, a Ctrl-C on the terminal and a
 * SIGINT sent to the recorder alone must each reach it exactly once.
 * Exit 0. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t interrupts;

static void on_interrupt(int sig) {
  (void)sig;
  interrupts++;
}

static void nap(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {}
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigaction(SIGINT, &sa, NULL);
  printf("ready\n");
  fflush(stdout);
  for (int waited = 0; interrupts == 0 && waited < 20000; waited += 10) nap(10);
  nap(500);
  printf("sigint %d\n", (int)interrupts);
  return 0;
}
