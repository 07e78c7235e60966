// Scratch: the packing side's grow-only buffers that are never zeroed.
#ifndef SPOOR_COMPRESS_SCRATCH_H
#define SPOOR_COMPRESS_SCRATCH_H

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "spoor/compress/huge_pages.h"

namespace spoor::compress {

// Scratch memory that is never zeroed: every byte is written before it is
// read, and zeroing megabytes the kernel has just zeroed (first touch) or
// that the last run wrote costs a pass over them. Grows, keeping `keep`
// items, and never shrinks.
template <typename T>
struct Scratch {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_copyable_v<T>);
  T* items = nullptr;  // from allocate_huge_pages: megabyte scratch is in huge pages
  size_t capacity = 0;
  Scratch() = default;
  Scratch(Scratch&& other) noexcept
      : items(std::exchange(other.items, nullptr)), capacity(std::exchange(other.capacity, 0)) {}
  Scratch& operator=(Scratch&& other) noexcept {
    std::swap(items, other.items);
    std::swap(capacity, other.capacity);
    return *this;
  }
  ~Scratch() {
    if (items != nullptr) release_huge_pages(items, capacity * sizeof(T));
  }
  T* data() { return items; }
  const T* data() const { return items; }
  T& operator[](size_t i) { return items[i]; }
  void ensure(size_t n, size_t keep = 0) {
    if (n <= capacity) return;
    const size_t grown = n * 3 / 2 > 4096 ? n * 3 / 2 : 4096;
    Scratch bigger;
    bigger.items = static_cast<T*>(allocate_huge_pages(grown * sizeof(T)));  // not zeroed
    bigger.capacity = grown;
    if (keep != 0) std::memcpy(bigger.items, items, keep * sizeof(T));
    *this = std::move(bigger);
  }
};

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_SCRATCH_H
