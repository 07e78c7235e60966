// How finely spoor record keeps its events' times: each record's tick
// reading is rounded down to a multiple of a power of two of ticks no
// longer than --time-resolution (default kDefaultTimeResolutionNs).
//
// Why round at all: the low bits of a fine clock's differences are noise
// that no packing can shrink. On an x86-64 host whose TSC moves in steps
// of 2 (2.6 GHz), malloc_heavy's 2.2 M events packed to 5.46 MB with every
// tick kept and to 4.50 MB at 16 ticks (6.2 ns), below heaptrack's 4.63 MB
// for the same run (bench/RESULTS.md); on a host whose TSC moved in steps
// of 21 the clock did that rounding by itself. On an AMD EPYC host whose
// TSC (2.445 GHz) moves in steps of ~24.5 ticks (10 ns), 16 ticks still
// kept that step's jitter: 4.65 MiB against heaptrack's 4.42 MiB, and 32
// ticks (13.1 ns, the 20 ns default) 4.22-4.27 MiB. A record's time cannot
// mean more than its clock read anyway: the rdtsc and what runs around it
// take ~10 ns, and a hook 50 ns or more. Whatever the grain, a stream's
// records keep their order, and a thread that moves to another CPU's ring
// takes microseconds to move. A tie across streams breaks by stream, which
// would put a free() before the malloc() of its block only if another
// thread freed it within one grain of its allocation: well under what
// handing a pointer to another CPU takes.
#ifndef SPOOR_PRELOAD_RECORD_TIME_GRAIN_H
#define SPOOR_PRELOAD_RECORD_TIME_GRAIN_H

#include <cstdint>

namespace spoor::record {

inline constexpr double kDefaultTimeResolutionNs = 20;

// The largest power of two of ticks, of a clock of `freq_millihz` (ticks
// per second times 1000), that lasts at most `resolution_ns`; 1 (every
// tick) when even two ticks last longer, for a resolution of 0, or for an
// unknown frequency (0).
constexpr uint64_t time_grain_ticks(double resolution_ns, uint64_t freq_millihz) {
  if (!(resolution_ns > 0) || freq_millihz == 0) return 1;
  const double ticks_per_ns = static_cast<double>(freq_millihz) / 1e12;
  uint64_t grain = 1;
  while (grain < (uint64_t{1} << 20) && static_cast<double>(grain * 2) <= resolution_ns * ticks_per_ns) grain *= 2;
  return grain;
}

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_TIME_GRAIN_H
