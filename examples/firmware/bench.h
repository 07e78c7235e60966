// Instructions per event, measured in the firmware itself. Run under
// `qemu-system-arm -icount shift=0`: QEMU then advances its virtual clock
// one nanosecond per instruction, and SysTick (25 MHz) counts that clock, so
// a tick is 40 instructions.
#ifndef SPOOR_FIRMWARE_BENCH_H
#define SPOOR_FIRMWARE_BENCH_H

#include <stdint.h>

#include "spoor/spoor.hpp"

namespace firmware {

// Times `events` Counter events (two u32 fields) on `ring`, in batches
// drained between timings, against the same loop with the provider
// disabled, and prints the results over semihosting. Returns 0, or 1 when
// the ring dropped an event (the figure would not be the write path's).
int run_bench(const spoor::RingView& ring, uint32_t events);

}  // namespace firmware

#endif  // SPOOR_FIRMWARE_BENCH_H
