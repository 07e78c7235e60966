// Compiled -O2 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables
// -fno-unwind-tables -fno-exceptions (with exceptions, g++ emits the table
// anyway): code in a module, with frame pointers, that no
// .eh_frame entry covers (as V8's builtins in node's executable).
#include "call_shapes.h"

namespace spoor::test {

__attribute__((noinline)) void recurse_without_unwind_table(int depth, Leaf leaf) {
  volatile char pad[24];
  pad[0] = static_cast<char>(depth);
  if (depth <= 0) leaf();
  else recurse_without_unwind_table(depth - 1, leaf);
  __asm__ volatile("" ::: "memory");
  (void)pad[0];
}

}  // namespace spoor::test
