#include "spoor/unwind/perf_regs.h"

#include <bit>
#include <cstring>

namespace spoor::unwind {

std::optional<uint64_t> PerfRegisters::get(unsigned reg) const {
  if (reg >= 64 || (mask & (uint64_t{1} << reg)) == 0) return std::nullopt;
  const auto index = static_cast<size_t>(std::popcount(mask & ((uint64_t{1} << reg) - 1)));
  if (values.size() < (index + 1) * 8) return std::nullopt;
  uint64_t v;
  std::memcpy(&v, values.data() + index * 8, 8);  // little-endian, as the trace
  return v;
}

}  // namespace spoor::unwind
