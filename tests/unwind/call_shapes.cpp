// Compiled -O2 -fomit-frame-pointer. Every call is followed by an empty asm
// so it is not a tail call (the caller's frame stays on the stack), and
// volatile locals of different sizes give the frames different CFA offsets.
#include <alloca.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "call_shapes.h"

namespace spoor::test {

#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void recurse_without_frame_pointer(int depth, Leaf leaf) {
  volatile char pad[24];
  pad[0] = static_cast<char>(depth);
  if (depth <= 0) leaf();
  else recurse_without_frame_pointer(depth - 1, leaf);
  KEEP_FRAME();
  (void)pad[0];
}

__attribute__((noinline)) void recurse_with_alloca(int depth, Leaf leaf) {
  auto* buf = static_cast<volatile char*>(alloca(static_cast<size_t>(16 + (depth % 5) * 48)));
  buf[0] = static_cast<char>(depth);
  if (depth <= 0) leaf();
  else recurse_with_alloca(depth - 1, leaf);
  KEEP_FRAME();
  (void)buf[0];
}

namespace {

using Step = void (*)(uint64_t, int, Leaf);
extern Step g_steps[8];

// Next link of the chain: picks a function from the seed's low bits.
inline void next(uint64_t seed, int depth, Leaf leaf) {
  if (depth <= 0) {
    leaf();
    return;
  }
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  g_steps[seed >> 61](seed, depth - 1, leaf);
}

template <int kWords>
__attribute__((noinline)) void step(uint64_t seed, int depth, Leaf leaf) {
  volatile uint64_t pad[kWords];
  pad[0] = seed;
  next(seed, depth, leaf);
  KEEP_FRAME();
  (void)pad[0];
}

// A frame that saves callee-saved registers (values live across the call).
__attribute__((noinline)) void step_saving_registers(uint64_t seed, int depth, Leaf leaf) {
  uint64_t a = seed ^ 1, b = seed ^ 2, c = seed ^ 3, d = seed ^ 4, e = seed ^ 5;
  __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
  next(seed, depth, leaf);
  __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
  KEEP_FRAME();
}

__attribute__((noinline)) void step_with_alloca(uint64_t seed, int depth, Leaf leaf) {
  auto* buf = static_cast<volatile char*>(alloca(static_cast<size_t>(8 + (seed >> 50) % 200)));
  buf[0] = 1;
  next(seed, depth, leaf);
  KEEP_FRAME();
  (void)buf[0];
}

Step g_steps[8] = {step<1>, step<3>, step<8>, step<40>, step<600>, step_saving_registers, step_with_alloca, step<2>};

Leaf g_sort_leaf = nullptr;
int g_sort_calls = 0;

int compare_ints(const void* a, const void* b) {
  if (g_sort_calls++ < 3) g_sort_leaf();
  const int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

}  // namespace

void random_call_chain(uint64_t seed, int depth, Leaf leaf) {
  next(seed, depth, leaf);
  KEEP_FRAME();
}

__attribute__((noinline)) void sort_with_qsort(Leaf leaf) {
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
  g_sort_leaf = leaf;
  g_sort_calls = 0;
  std::qsort(values, 64, sizeof(int), compare_ints);
  KEEP_FRAME();
}

__attribute__((noinline)) void sort_with_std_sort(Leaf leaf) {
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
  int calls = 0;
  std::sort(values, values + 64, [&](int a, int b) {
    if (calls++ < 3) leaf();
    return a < b;
  });
  KEEP_FRAME();
}

}  // namespace spoor::test
