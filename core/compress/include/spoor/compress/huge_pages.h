// Memory for the packing side's megabyte buffers, in transparent huge
// pages where they are the cheaper kind.
//
// Runs of blocks and the packer's columns are megabytes written front to
// back, once per buffer. In 4 KiB pages that is a page fault per 4 KiB:
// ~2 us each on bare metal, 12-30 us on a virtual machine that faults each
// page in twice (bench/RESULTS.md), where the drainer's copies into fresh
// runs took half its CPU and let the program's rings overflow. A 2 MiB
// page is one fault. Buffers of 2 MiB or more start on a 2 MiB boundary
// and are marked MADV_HUGEPAGE before anything touches them, so every page
// of them can be a huge one; smaller ones are plain allocations.
//
// But huge pages do not always pay. On another host of the same virtual
// machine, whose guest reports its free memory back, a 4 KiB page's first
// touch cost ~2 us, and a 2 MiB page the host had taken back 5-8 ms (one
// the guest freed a moment before ~0.25 ms), so that recordings started
// a second apart took a third longer with huge pages; a half-used 2 MiB
// page is zeroed whole too (bench/RESULTS.md). So each process times a
// few fresh 4 KiB pages once, at its first megabyte buffer
// (huge_pages_pay), and marks its buffers MADV_NOHUGEPAGE where they are
// cheap. Timing a huge page instead told nothing: the one timed is often
// one just freed, the next ones are not.
//
// Where THP is "never" the advice does nothing; on "madvise" systems
// (Debian's default) it is what turns THP on. The memory comes from malloc,
// so a freed buffer is reused by the next one as the recorder reuses all
// its memory (record.cpp's keep_freed_memory).
#ifndef SPOOR_COMPRESS_HUGE_PAGES_H
#define SPOOR_COMPRESS_HUGE_PAGES_H

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace spoor::compress {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// What a first touch of fresh 4 KiB pages costs here, in nanoseconds per
// 2 MiB (128 pages timed, scaled); -1 if no memory could be mapped.
double small_pages_cost_ns();
// 4 KiB pages dearer than this per 2 MiB (8 us a page) make huge pages
// pay: where they cost 12-30 us each, huge pages cut a recorder's page
// faults from ~23,000 to ~4,300 and its drain kept up; where they cost
// ~2 us, huge pages made a recording a third longer (bench/RESULTS.md).
inline constexpr double kDearSmallPagesNs = 512 * 8000.0;
// Whether huge pages pay: SPOOR_HUGE_PAGES=1 or 0 (`setting`) decides;
// without it, whether small pages are dear (`small_cost()`, against
// kDearSmallPagesNs; huge pages when it measured nothing, as before there
// was a choice).
bool choose_huge_pages(const char* setting, double (*small_cost)());
// This process's choice, made at its first call (choose_huge_pages with
// the environment's setting and small_pages_cost_ns).
bool huge_pages_pay();

// Memory for `bytes`, at a 2 MiB boundary and advised as huge_pages_pay()
// chose when that is 2 MiB or more. Free with release_huge_pages(p, bytes).
inline void* allocate_huge_pages(size_t bytes) {
  if (bytes < kHugePageBytes) return ::operator new(bytes);
  const size_t rounded = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  if (p == nullptr) throw std::bad_alloc();
  // Advice: a failure only means the other kind of page.
  madvise(p, rounded, huge_pages_pay() ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return p;
}

inline void release_huge_pages(void* p, size_t bytes) {
  if (bytes < kHugePageBytes)
    ::operator delete(p);
  else
    std::free(p);
}

// For std::vector: element storage from allocate_huge_pages.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_huge_pages(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { release_huge_pages(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

// The same memory, but resize() leaves new bytes as they are instead of
// zeroing them: for buffers every byte of which is written next, as
// unpack() writes a COMPRESSED block's blocks (it fails unless it wrote
// exactly the size it resized to). The zeroing was a memset of every
// expanded byte on the reader's thread.
template <typename T>
struct UninitializedHugePageAllocator : HugePageAllocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedHugePageAllocator<U>;
  };
  UninitializedHugePageAllocator() = default;
  template <typename U>
  UninitializedHugePageAllocator(const UninitializedHugePageAllocator<U>&) {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialized: no zeroing
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(static_cast<Args&&>(args)...);
  }
};

// What a COMPRESSED block expands to (unpack), and zstd's frame before it.
using ExpandedBytes = std::vector<uint8_t, UninitializedHugePageAllocator<uint8_t>>;

// A byte buffer of the packing side: a run of blocks, the columns of one.
// Its resize() leaves the new bytes as they are, like ExpandedBytes': they
// are written next (append_bytes, the columns' planes).
using PageBuffer = ExpandedBytes;

// Appends `size` bytes to `buffer`: a resize that writes nothing, then one
// memcpy. vector::insert of a range copies through the allocator element
// by element (libstdc++ takes its memmove path for std::allocator only): a
// byte an instruction, which was a quarter of the recorder's drain thread
// gathering runs (bench/RESULTS.md).
inline void append_bytes(PageBuffer& buffer, const void* data, size_t size) {
  if (size == 0) return;
  const size_t at = buffer.size();
  buffer.resize(at + size);
  std::memcpy(buffer.data() + at, data, size);
}

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_HUGE_PAGES_H
