// Whether this process's megabyte buffers go on huge pages: what a first
// touch of a small page costs here, measured once (huge_pages.h).
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

}  // namespace

double small_pages_cost_ns() {
  const size_t bytes = kSmallPagesTimed * kSmallPage;
  void* region = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return -1;
  madvise(region, bytes, MADV_NOHUGEPAGE);  // under THP "always" too
  volatile auto* const memory = static_cast<volatile uint8_t*>(region);
  const auto began = std::chrono::steady_clock::now();
  for (size_t at = 0; at < bytes; at += kSmallPage) memory[at] = 1;
  const auto took = std::chrono::steady_clock::now() - began;
  munmap(region, bytes);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(took).count();
  return static_cast<double>(ns) * static_cast<double>(kHugePageBytes / kSmallPage) / kSmallPagesTimed;
}

bool choose_huge_pages(const char* setting, double (*small_cost)()) {
  if (setting != nullptr && std::strcmp(setting, "1") == 0) return true;
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  const double small = small_cost();
  return small < 0 || small >= kDearSmallPagesNs;
}

bool huge_pages_pay() {
  static const bool pay = choose_huge_pages(std::getenv("SPOOR_HUGE_PAGES"), small_pages_cost_ns);
  return pay;
}

}  // namespace spoor::compress
