// How much of a memory limit spoor record's packing may take.
//
// The recorder keeps runs of the program's events in memory until they
// are packed and written: up to 1.5x a 256 MiB backlog, and each packing
// thread's scratch, ~8 runs' worth (~64 MiB for 8 MiB runs). That is
// memory for speed where memory is plenty; inside a cgroup with a memory
// limit (a container's, a systemd unit's, a batch job's), which the
// program shares, it got the recorder killed: malloc_heavy with 2 threads
// under a 100 MiB limit peaked the recorder at ~165 MiB and the kernel's
// OOM killer ended it, leaving a cut trace. So under a limit (cgroup_memory.h):
//   - runs of 8 MiB while the limit holds kLimitPerRun of them, halved
//     below (1 MiB at least): smaller runs pack a few percent larger;
//   - a backlog of at most 1/6 of the limit: beyond it runs are written
//     unpacked (larger, never lost) and, 1.5x beyond (1/4 of the limit),
//     the drain waits;
//   - packing threads whose scratch together stays within 1/4 of it.
// Together about half the limit; the other half is the program's. The
// price is the file: where the program outruns the packing, runs go out
// unpacked sooner (bench/RESULTS.md: under 256 MiB, 4 M allocations on
// 2 threads made 211 MiB where the defaults' recorder was killed).
#ifndef SPOOR_PRELOAD_RECORD_PACKING_BUDGET_H
#define SPOOR_PRELOAD_RECORD_PACKING_BUDGET_H

#include <cstddef>
#include <cstdint>

#include "spoor/host/block_compressor.h"

namespace spoor::record {

struct PackingBudget {
  // BlockCompressor's defaults until a limit makes them smaller.
  size_t run_bytes = host::CompressionOptions{}.run_bytes;
  size_t backlog_limit = host::CompressionOptions{}.backlog_limit;
  uint32_t threads = host::CompressionOptions{}.threads;  // 0: one per CPU, at most 8
  bool fitted = false;                                     // smaller than the defaults for a limit
};

inline constexpr uint64_t kLimitPerRun = 48;
inline constexpr size_t kSmallestRun = size_t{1} << 20;
inline constexpr uint64_t kScratchRunsPerThread = 8;
inline constexpr uint32_t kMostPackingThreads = 8;  // as BlockCompressor, with threads 0

// The packing for `cpus` CPUs under a memory limit of `limit_bytes`
// (UINT64_MAX: none, the defaults).
constexpr PackingBudget packing_within_memory(uint64_t limit_bytes, uint32_t cpus) {
  PackingBudget budget;
  if (limit_bytes == UINT64_MAX) return budget;
  const PackingBudget defaults;
  while (budget.run_bytes > kSmallestRun && budget.run_bytes * kLimitPerRun > limit_bytes) budget.run_bytes /= 2;
  if (limit_bytes / 6 < budget.backlog_limit) budget.backlog_limit = static_cast<size_t>(limit_bytes / 6);
  const uint64_t thread_room = limit_bytes / 4 / (kScratchRunsPerThread * budget.run_bytes);
  const uint32_t default_threads = cpus < kMostPackingThreads ? (cpus == 0 ? 1 : cpus) : kMostPackingThreads;
  if (thread_room < default_threads) budget.threads = thread_room < 1 ? 1 : static_cast<uint32_t>(thread_room);
  budget.fitted = budget.run_bytes != defaults.run_bytes || budget.backlog_limit != defaults.backlog_limit ||
                  budget.threads != defaults.threads;
  return budget;
}

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_PACKING_BUDGET_H
