// Call chains of different shapes for the fast unwinder's tests: each ends
// by calling `leaf`, which captures the stack. They live in files compiled
// with chosen flags (see tests/unwind/CMakeLists.txt), so the frames
// between the test and the leaf have known kinds.
#ifndef SPOOR_TESTS_UNWIND_CALL_SHAPES_H
#define SPOOR_TESTS_UNWIND_CALL_SHAPES_H

#include <cstdint>

namespace spoor::test {

using Leaf = void (*)();

// call_shapes.cpp: -O2 -fomit-frame-pointer (CFA = rsp + N everywhere).
void recurse_without_frame_pointer(int depth, Leaf leaf);
// Functions with alloca: CFA = rbp + 16 even without -fno-omit-frame-pointer.
void recurse_with_alloca(int depth, Leaf leaf);
// A chain of `depth` calls through eight functions with different frame
// sizes, in an order drawn from `seed`.
void random_call_chain(uint64_t seed, int depth, Leaf leaf);
// Calls leaf from qsort's comparator (frames of the C library in between)
// and from std::sort's.
void sort_with_qsort(Leaf leaf);
void sort_with_std_sort(Leaf leaf);

// call_shapes_fp.cpp: -O2 -fno-omit-frame-pointer (CFA = rbp + 16).
void recurse_with_frame_pointer(int depth, Leaf leaf);

// call_shapes_no_table.cpp: the same, without unwind tables.
void recurse_without_unwind_table(int depth, Leaf leaf);

}  // namespace spoor::test

// unwind_plt_lib.cpp, a shared library the test calls through the PLT.
extern "C" void spoor_test_plt_recurse(int depth, void (*leaf)());

// unwind_reload_lib.cpp, built twice (frames of different sizes at the same
// offsets) to be loaded one after the other at the same address.
extern "C" void spoor_test_reload_call(void (*leaf)());

#endif  // SPOOR_TESTS_UNWIND_CALL_SHAPES_H
