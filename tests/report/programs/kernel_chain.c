/* Spins for about 300 ms of wall time at the bottom of a call chain built
 * with -O2 -fomit-frame-pointer: the kernel's CPU samples land in
 * kernel_chain_leaf, and only DWARF unwinding of their stack copies finds
 * kernel_chain_mid and main above it. Then touches fresh pages (faults)
 * and sleeps (a blocked switch). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) uint64_t kernel_chain_leaf(uint64_t n) {
  volatile uint64_t x = 0;
  for (uint64_t i = 0; i < n; ++i) x += i * 3;
  return x;
}

__attribute__((noinline)) uint64_t kernel_chain_mid(uint64_t n) {
  volatile uint64_t pad[4] = {1, 2, 3, 4};
  return kernel_chain_leaf(n) + pad[0];
}

int main(void) {
  struct timespec t0, t;
  uint64_t sum = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    sum += kernel_chain_mid(100000);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
  char* pages = malloc(64 << 12);
  for (int i = 0; i < 64; ++i) pages[i << 12] = (char)i;
  usleep(20000);
  sum += (uint64_t)pages[4096];
  free(pages);
  return sum == 42 ? 1 : 0;
}
