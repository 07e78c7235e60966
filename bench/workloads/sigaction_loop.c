/* spoor_workload_sigaction_loop: what the shim's signal hooks cost. Installs
 * a SIGUSR1 handler with sigaction N times, reads it back N times, then
 * raises SIGUSR1 N times (the handler runs through the shim's trampoline
 * when traced). Prints the ns per call of each:
 *
 *   spoor_workload_sigaction_loop [N]      (default 200000)
 *
 * bench/signal_hooks.sh runs it untraced and under spoor record. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t hits;

static void on_usr1(int sig) {
  (void)sig;
  ++hits;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 200000;
  if (n <= 0) return 2;
  struct sigaction sa, back;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  const double t0 = now_ns();
  for (int i = 0; i < n; ++i) sigaction(SIGUSR1, &sa, NULL);
  const double t1 = now_ns();
  for (int i = 0; i < n; ++i) sigaction(SIGUSR1, NULL, &back);
  const double t2 = now_ns();
  for (int i = 0; i < n; ++i) raise(SIGUSR1);
  const double t3 = now_ns();
  printf("install %.0f ns, query %.0f ns, raise+handler %.0f ns (handled %d)\n", (t1 - t0) / n, (t2 - t1) / n,
         (t3 - t2) / n, (int)hits);
  return hits == n ? 0 : 1;
}
