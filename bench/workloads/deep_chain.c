/* deep_chain [SECONDS]: burns CPU for SECONDS (default 5) at the bottom of
 * call chains 6 to 21 frames deep, in code built without frame pointers
 * (bench/CMakeLists.txt): the workload of the offline-unwinding benchmark
 * (bench/kernel_unwind.sh). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) uint64_t chain_leaf(uint64_t n) {
  volatile uint64_t x = 0;
  for (uint64_t i = 0; i < n; ++i) x += i * 3;
  return x;
}

__attribute__((noinline)) uint64_t chain_recurse(uint64_t n, int depth) {
  volatile uint64_t pad[3] = {(uint64_t)depth, 0, 0};
  const uint64_t r = depth <= 0 ? chain_leaf(n) : chain_recurse(n, depth - 1);
  return r + pad[0];
}

__attribute__((noinline)) uint64_t chain_c(uint64_t n, int depth) {
  volatile uint64_t pad[5] = {3, 0, 0, 0, 0};
  return chain_recurse(n, depth) + pad[0];
}

__attribute__((noinline)) uint64_t chain_b(uint64_t n, int depth) {
  volatile uint64_t pad[7] = {2, 0, 0, 0, 0, 0, 0};
  return chain_c(n, depth) + pad[0];
}

__attribute__((noinline)) uint64_t chain_a(uint64_t n, int depth) {
  volatile uint64_t pad[2] = {1, 0};
  return chain_b(n, depth) + pad[0];
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 5.0;
  struct timespec t0, t;
  uint64_t sum = 0;
  int round = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    sum += chain_a(20000, round++ % 16);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
  return sum == 42 ? 1 : 0;
}
