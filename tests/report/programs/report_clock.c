// Spins on clock_gettime(CLOCK_MONOTONIC) for 300 ms: nearly all of its
// CPU time is in the vDSO, whose code has no file on disk.
#include <stdint.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void) {
  const int64_t end = now_ns() + 300000000;
  while (now_ns() < end) {
  }
  return 0;
}
