// Built with -O2 -fomit-frame-pointer. Each function keeps a volatile
// local live across its call (so the call is no tail call, and the frame
// has a size the CFI must describe) and is never inlined.
#include "call_chain.h"

#include <time.h>

#include <atomic>

#include "sample_capture.h"

extern "C" {

__attribute__((noinline)) uint64_t offline_spin_leaf(size_t until) {
  const std::atomic<size_t>& samples = spoor::testing::capture_counter();
  volatile uint64_t work[4] = {1, 2, 3, 4};
  uint64_t x = 0;
  while (samples.load(std::memory_order_relaxed) < until) {
    work[x & 3] = work[(x + 1) & 3] * 3 + 1;
    ++x;
  }
  return x + work[0];
}

__attribute__((noinline)) uint64_t offline_spin_clock(size_t until) {
  const std::atomic<size_t>& samples = spoor::testing::capture_counter();
  uint64_t x = 0;
  timespec ts;
  while (samples.load(std::memory_order_relaxed) < until) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x += static_cast<uint64_t>(ts.tv_nsec);
  }
  return x;
}

__attribute__((noinline)) uint64_t offline_chain_a_vdso(size_t until, int depth) {
  volatile uint64_t pad[2] = {static_cast<uint64_t>(depth), 0};
  return offline_spin_clock(until) + pad[0];
}

__attribute__((noinline)) uint64_t offline_recurse(size_t until, int depth) {
  volatile uint64_t pad[3] = {static_cast<uint64_t>(depth), 0, 0};
  const uint64_t r = depth <= 0 ? offline_spin_leaf(until) : offline_recurse(until, depth - 1);
  return r + pad[0];
}

__attribute__((noinline)) uint64_t offline_chain_c(size_t until, int depth) {
  volatile uint64_t pad[5] = {3, 0, 0, 0, 0};
  return offline_recurse(until, depth) + pad[0];
}

__attribute__((noinline)) uint64_t offline_chain_b(size_t until, int depth) {
  volatile uint64_t pad[7] = {2, 0, 0, 0, 0, 0, 0};
  return offline_chain_c(until, depth) + pad[0];
}

__attribute__((noinline)) uint64_t offline_chain_a(size_t until, int depth) {
  volatile uint64_t pad[2] = {1, 0};
  return offline_chain_b(until, depth) + pad[0];
}

}  // extern "C"
