// Whether this process's megabyte buffers go on huge pages: what a first
// touch of each kind of page costs here, measured once (huge_pages.h).
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "spoor/compress/huge_pages.h"

namespace spoor::compress {
namespace {

// Small pages timed: enough for a stable mean (0.1-4 ms), few enough to
// be cheap.
constexpr size_t kSmallPagesTimed = 128;
constexpr size_t kSmallPage = 4096;

// Nanoseconds to write one byte in each `step` bytes of `bytes` of fresh
// anonymous memory at a 2 MiB boundary, advised `advice`; -1 if no memory
// could be mapped.
double touch_fresh(size_t bytes, size_t step, int advice) {
  const size_t mapped = bytes + kHugePageBytes;  // room to align
  void* region = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return -1;
  const auto start = (reinterpret_cast<uintptr_t>(region) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  madvise(reinterpret_cast<void*>(start), bytes, advice);
  volatile auto* const memory = reinterpret_cast<volatile uint8_t*>(start);
  const auto began = std::chrono::steady_clock::now();
  for (size_t at = 0; at < bytes; at += step) memory[at] = 1;
  const auto took = std::chrono::steady_clock::now() - began;
  munmap(region, mapped);
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count());
}

}  // namespace

double small_pages_cost_ns() {
  const double timed = touch_fresh(kSmallPagesTimed * kSmallPage, kSmallPage, MADV_NOHUGEPAGE);
  return timed < 0 ? -1 : timed * static_cast<double>(kHugePageBytes / kSmallPage) / kSmallPagesTimed;
}

// One byte faults the whole page in (zeroed) where THP allows.
double huge_page_cost_ns() { return touch_fresh(kHugePageBytes, kHugePageBytes, MADV_HUGEPAGE); }

bool choose_huge_pages(const char* setting, double (*small_cost)(), double (*huge_cost)()) {
  if (setting != nullptr && std::strcmp(setting, "1") == 0) return true;
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  const double small = small_cost();
  if (small >= 0 && small < kCheapSmallPagesNs) return false;
  const double huge = huge_cost();
  if (small < 0 || huge < 0) return true;  // not measured: huge pages, as everywhere before the choice
  return huge < small;
}

bool huge_pages_pay() {
  static const bool pay = choose_huge_pages(std::getenv("SPOOR_HUGE_PAGES"), small_pages_cost_ns, huge_page_cost_ns);
  return pay;
}

}  // namespace spoor::compress
