// What heap_known.cpp allocates, as a table the program follows and the
// tests sum: each batch is `count` calls of one allocator function with the
// sizes first_size, first_size + step, ... Every size falls in
// [kBandLow, kBandHigh), a band nothing else in the program allocates in
// (it does no stdio, and the C++ runtime's own blocks are smaller or
// larger), so a tool's report restricted to the band is the program's
// allocations alone, whatever the runtime allocates before main or at exit.
// Sizes differ from batch to batch, so a miscounted function shows up as
// its own sizes.
#ifndef SPOOR_TESTS_HEAP_KNOWN_H
#define SPOOR_TESTS_HEAP_KNOWN_H

#include <cstddef>

namespace heap_known {

enum class Function {
  malloc,
  calloc,              // calloc(4, size / 4): size is a multiple of 4
  realloc_from_null,   // realloc(NULL, size)
  realloc_grow,        // realloc of a realloc_from_null block to size
  operator_new,        // ::operator new(size)
  operator_new_array,  // new char[size]
  operator_new_nothrow,  // new (std::nothrow) char[size]
  operator_new_aligned,  // new (std::align_val_t(64)) char[size]: size is a multiple of 64
  posix_memalign,      // posix_memalign(&p, 64, size)
  aligned_alloc,       // aligned_alloc(64, size): size is a multiple of 64
  valloc,
  memalign,            // memalign(64, size)
  pvalloc,             // the block is size rounded up to whole pages
};

struct Batch {
  Function function;
  const char* name;
  int count;
  size_t first_size;
  size_t step;
  // heaptrack 1.4 does not interpose memalign and pvalloc.
  bool heaptrack_sees;
};

inline constexpr size_t kBandLow = 20000;
inline constexpr size_t kBandHigh = 70000;  // pvalloc's 32 KiB fits even with 64 KiB pages

// realloc_grow follows realloc_from_null and grows the same blocks: keep
// their counts equal.
inline constexpr Batch kBatches[] = {
    {Function::malloc, "malloc", 100, 20000, 1, true},
    {Function::calloc, "calloc", 50, 21000, 4, true},
    {Function::realloc_from_null, "realloc(NULL)", 25, 22000, 1, true},
    {Function::realloc_grow, "realloc", 25, 22500, 1, true},
    {Function::operator_new, "operator new", 50, 23000, 1, true},
    {Function::operator_new_array, "operator new[]", 50, 23500, 1, true},
    {Function::operator_new_nothrow, "operator new[](nothrow)", 20, 24000, 1, true},
    {Function::operator_new_aligned, "operator new[](align_val_t)", 10, 25024, 64, true},
    {Function::posix_memalign, "posix_memalign", 20, 26000, 1, true},
    {Function::aligned_alloc, "aligned_alloc", 20, 27008, 64, true},
    {Function::valloc, "valloc", 20, 28000, 1, true},
    {Function::memalign, "memalign", 20, 30000, 1, false},
    {Function::pvalloc, "pvalloc", 20, 31000, 1, false},
};

inline constexpr size_t size_of(const Batch& b, int i) { return b.first_size + b.step * static_cast<size_t>(i); }

}  // namespace heap_known

#endif  // SPOOR_TESTS_HEAP_KNOWN_H
