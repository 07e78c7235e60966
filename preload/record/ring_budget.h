// The rings a recording gets by default under an address-space limit
// (RLIMIT_AS, `ulimit -v`) or a memory limit (the recorder's cgroup's).
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
//
// A memory limit counts only the ring pages written, and the writers go
// back to a ring's start at 4 MiB while the drain keeps up. But when the
// drain waits for the file (a slow disk, `-o -` into a pipe read slowly)
// the rings fill: under a 100 MiB cgroup limit, 2 CPUs' rings of 32 MiB
// took 64 MiB beside the packing's ~50 (packing_budget.h), and the kernel
// killed the recorder. So the rings of a process are kept within
// 1/kRingsShareOfMemory of a memory limit too: 8 MiB per CPU under 100 MiB
// on two CPUs (nothing lost in 8 recordings of malloc_heavy with 2 threads
// into a file, and the slow pipe's losses counted where the recorder had
// been killed), the default from 256 MiB up.
#ifndef SPOOR_PRELOAD_RECORD_RING_BUDGET_H
#define SPOOR_PRELOAD_RECORD_RING_BUDGET_H

#include <cstddef>
#include <cstdint>

namespace spoor::record {

inline constexpr uint64_t kRingsShareOfLimit = 32;
inline constexpr uint64_t kRingsShareOfMemory = 4;

// The ring per CPU for `cpus` CPUs whose rings together may take
// 1/`share` of `limit_bytes` (UINT64_MAX: no limit): `preferred` when it
// fits, else the largest of preferred / 2^k that does, at least `smallest`.
constexpr size_t ring_bytes_within_share(uint64_t limit_bytes, uint64_t share, uint32_t cpus, size_t preferred,
                                         size_t smallest) {
  if (limit_bytes == UINT64_MAX || cpus == 0) return preferred;
  const uint64_t budget = limit_bytes / share / cpus;
  size_t bytes = preferred;
  while (bytes > budget && bytes / 2 >= smallest) bytes /= 2;
  return bytes;
}

// Under an address-space limit.
constexpr size_t ring_bytes_within_limit(uint64_t limit_bytes, uint32_t cpus, size_t preferred, size_t smallest) {
  return ring_bytes_within_share(limit_bytes, kRingsShareOfLimit, cpus, preferred, smallest);
}

// What made the default rings smaller, for the summary.
enum class RingLimit { none, address_space, memory };

struct DefaultRings {
  size_t bytes_per_cpu;
  RingLimit limited_by;
};

// The rings within both limits (UINT64_MAX: none); the address space's
// is named where both halve them to the same size.
constexpr DefaultRings default_rings(uint64_t address_limit, uint64_t memory_limit, uint32_t cpus, size_t preferred,
                                     size_t smallest) {
  const size_t by_address = ring_bytes_within_limit(address_limit, cpus, preferred, smallest);
  const size_t by_memory = ring_bytes_within_share(memory_limit, kRingsShareOfMemory, cpus, preferred, smallest);
  if (by_memory < by_address) return {by_memory, RingLimit::memory};
  return {by_address, by_address < preferred ? RingLimit::address_space : RingLimit::none};
}

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_RING_BUDGET_H
