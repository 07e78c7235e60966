// Compiled -O2 -fno-omit-frame-pointer: every frame's CFA is rbp + 16.
#include "call_shapes.h"

namespace spoor::test {

__attribute__((noinline)) void recurse_with_frame_pointer(int depth, Leaf leaf) {
  volatile char pad[40];
  pad[0] = static_cast<char>(depth);
  if (depth <= 0) leaf();
  else recurse_with_frame_pointer(depth - 1, leaf);
  __asm__ volatile("" ::: "memory");
  (void)pad[0];
}

}  // namespace spoor::test
