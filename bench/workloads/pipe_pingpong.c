// Two threads passing a byte back and forth through two pipes: every round
// trip is two context switches, so what a tracer adds to each switch shows
// (bench/sample_clock.sh: a thread's task clock is switched out and in
// with it). Each thread first spins 20 ms of CPU time, so that a sampler
// that starts a thread's clock late (at its first sample) has started it.
//
//   spoor_workload_pipe_pingpong [round trips]     (default 100000)
//
// Prints "pipe_pingpong: round_trips=N seconds=S" (the round trips' wall
// time); exit 0.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int to_echo[2], from_echo[2];

static double seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin_20_ms(void) {
  const double start = seconds(CLOCK_THREAD_CPUTIME_ID);
  while (seconds(CLOCK_THREAD_CPUTIME_ID) - start < 0.02) {
  }
}

static void* echo(void* arg) {
  char c;
  spin_20_ms();
  while (read(to_echo[0], &c, 1) == 1 && c != 'q')
    if (write(from_echo[1], &c, 1) != 1) break;
  return arg;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  if (pipe(to_echo) != 0 || pipe(from_echo) != 0) return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, echo, NULL) != 0) return 1;
  spin_20_ms();
  char c = 'x';
  const double start = seconds(CLOCK_MONOTONIC);
  for (long i = 0; i < n; ++i)
    if (write(to_echo[1], &c, 1) != 1 || read(from_echo[0], &c, 1) != 1) return 1;
  const double took = seconds(CLOCK_MONOTONIC) - start;
  c = 'q';
  if (write(to_echo[1], &c, 1) != 1) return 1;
  pthread_join(t, NULL);
  printf("pipe_pingpong: round_trips=%ld seconds=%.4f\n", n, took);
  return 0;
}
