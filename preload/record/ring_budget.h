// The rings a recording gets by default under an address-space limit
// (RLIMIT_AS, `ulimit -v`).
//
// Every traced process maps its region (one ring per configured CPU) into
// its own address space, and the recorder maps the region of every process
// live at once. The default of 32 MiB per CPU is address space, not memory
// (the writers touch the first 4 MiB while the drain keeps up), but a limit
// counts address space: under `ulimit -v 100000` (98 MiB) a Python
// program could not map its 64 MiB region and ran untraced, and under
// `ulimit -v 200000` the recorder, holding the regions of a chain of
// shells, could not map a region for the next process, which ran
// untraced too. So where the limit is finite and --buffer-size was not
// given, each CPU's ring is the largest power of two, halving from the
// default, that keeps all of a process's rings within 1/kRingsShareOfLimit
// of the limit: 1 MiB per CPU on two CPUs under 98 MiB, where python3
// started from a pyenv shim (41 processes) was traced whole and lost
// nothing. Never below two packets, the smallest ring.
#ifndef SPOOR_PRELOAD_RECORD_RING_BUDGET_H
#define SPOOR_PRELOAD_RECORD_RING_BUDGET_H

#include <cstddef>
#include <cstdint>

namespace spoor::record {

inline constexpr uint64_t kRingsShareOfLimit = 32;

// The ring per CPU for `cpus` CPUs under an address-space limit of
// `limit_bytes` (UINT64_MAX: none): `preferred` when it fits, else the
// largest of preferred / 2^k that does, at least `smallest`.
constexpr size_t ring_bytes_within_limit(uint64_t limit_bytes, uint32_t cpus, size_t preferred, size_t smallest) {
  if (limit_bytes == UINT64_MAX || cpus == 0) return preferred;
  const uint64_t budget = limit_bytes / kRingsShareOfLimit / cpus;
  size_t bytes = preferred;
  while (bytes > budget && bytes / 2 >= smallest) bytes /= 2;
  return bytes;
}

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_RING_BUDGET_H
