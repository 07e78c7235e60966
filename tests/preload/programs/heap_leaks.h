// What heap_leaks.cpp leaks: `count` blocks per batch, sizes first_size,
// first_size + step, ..., each in [kBandLow, kBandHigh), a band nothing else
// in the program allocates in. Every leaked block is definitely lost (no
// pointer to it survives); the program also allocates and frees blocks in
// the same band, which must not count as leaks.
#ifndef SPOOR_TESTS_HEAP_LEAKS_H
#define SPOOR_TESTS_HEAP_LEAKS_H

#include <cstddef>

namespace heap_leaks {

enum class Function {
  malloc,
  calloc,              // calloc(3, size / 3): size is a multiple of 3
  realloc_moved,       // malloc(size - 3000), then realloc to size: moved
  operator_new_array,  // new char[size]
  memalign,            // memalign(64, size)
};

struct Batch {
  Function function;
  int count;
  size_t first_size;
  size_t step;
};

inline constexpr size_t kBandLow = 40000;
inline constexpr size_t kBandHigh = 60000;

inline constexpr Batch kLeaks[] = {
    {Function::malloc, 10, 40001, 1},
    {Function::calloc, 5, 42000, 3},
    {Function::realloc_moved, 5, 50000, 2},
    {Function::operator_new_array, 5, 43000, 1},
    {Function::memalign, 5, 45000, 1},
};

inline constexpr size_t size_of(const Batch& b, int i) { return b.first_size + b.step * static_cast<size_t>(i); }

inline constexpr size_t leaked_blocks() {
  size_t n = 0;
  for (const Batch& b : kLeaks) n += static_cast<size_t>(b.count);
  return n;
}

inline constexpr size_t leaked_bytes() {
  size_t n = 0;
  for (const Batch& b : kLeaks)
    for (int i = 0; i < b.count; ++i) n += size_of(b, i);
  return n;
}

}  // namespace heap_leaks

#endif  // SPOOR_TESTS_HEAP_LEAKS_H
