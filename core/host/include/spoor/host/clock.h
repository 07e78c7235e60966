// Relating the core's tick counter to CLOCK_MONOTONIC, so that every event
// (and, later, the kernel's) sits on one timeline.
#ifndef SPOOR_HOST_CLOCK_H
#define SPOOR_HOST_CLOCK_H

#include <cstdint>

#include "spoor/format.h"

namespace spoor::host {

// One simultaneous reading of the tick counter and the system clocks.
struct ClockSample {
  uint64_t ticks;
  int64_t monotonic_ns;
  int64_t realtime_ns;
};

// Takes a sample: the tick read sits between two CLOCK_MONOTONIC reads, and
// the tightest of a few tries is kept (error ~ tens of ns).
ClockSample sample_clock();

// The CLOCK block for two samples taken some time apart (longer is more
// precise: 5 ms gives ~20 ppm, a whole session far better). `ref` is the
// reference point of the conversion.
format::ClockBlock clock_block(const ClockSample& ref, const ClockSample& later);

// The clock source of spoor_port_ticks() on this build.
format::ClockSource tick_source();

}  // namespace spoor::host

#endif  // SPOOR_HOST_CLOCK_H
