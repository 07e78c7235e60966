// A program whose signal handler calls write(2), which is async-signal-safe,
// while the main loop spends most of its time inside malloc and free: a
// 100 us timer (ITIMER_REAL: high resolution, unlike the CPU-time timers,
// which fire at the scheduler's tick) interrupts the allocator thousands of times, at ever new
// places in it. Traced, the write's stack is captured there; nothing the
// shim does for it may allocate (the interrupted malloc holds its arena).
// Prints the number of handler calls that reached write, and a checksum of
// the blocks, which are the same traced or not.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static int g_null_fd = -1;
static volatile sig_atomic_t g_writes = 0;

static void on_tick(int sig) {
  (void)sig;
  if (write(g_null_fd, ".", 1) == 1) g_writes = g_writes + 1;
}

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? atol(argv[1]) : 3000000;
  g_null_fd = open("/dev/null", O_WRONLY);
  if (g_null_fd < 0) return 1;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_tick;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, NULL);
  const struct itimerval every = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &every, NULL);

  enum { kLive = 4096 };
  static unsigned char* live[kLive];
  unsigned long long rng = 88172645463325252ull, checksum = 0;
  for (long i = 0; i < rounds; ++i) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    const size_t slot = rng % kLive, size = 16 + (rng >> 20) % 4000;
    free(live[slot]);
    live[slot] = malloc(size);
    if (live[slot] == NULL) return 1;
    live[slot][0] = (unsigned char)i;
    checksum += live[slot][0] + size;
  }
  const struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("checksum %llu, handler writes %s\n", checksum, g_writes > 0 ? "some" : "none");
  return 0;
}
