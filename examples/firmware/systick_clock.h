// The example's clock: SysTick counting the CPU clock, extended to 64 bits
// by counting its wraps in the SysTick handler, which also calls the
// program's per-tick work. On a real Cortex-M3 the DWT cycle counter is
// cheaper (one load, widened when it wraps), but QEMU does not model it:
// CYCCNT reads 0 on mps2-an385.
#ifndef SPOOR_FIRMWARE_SYSTICK_CLOCK_H
#define SPOOR_FIRMWARE_SYSTICK_CLOCK_H

#include <stdint.h>

#include "cortex_m.h"

namespace systick {

// SysTick counts the processor clock: 25 MHz on mps2-an385 (QEMU's
// SYSCLK_FRQ). Under -icount shift=0 QEMU runs one instruction per virtual
// nanosecond, so a tick is then 40 instructions.
inline constexpr uint32_t kHz = 25'000'000;

// Starts counting from 0 with an exception every `period_ticks` (at most
// 2^24), which runs on_tick() after the wrap is counted. on_tick may be null.
void start(uint32_t period_ticks, void (*on_tick)());

// Stops calling on_tick (the clock keeps counting). After it returns, the
// handler calls it no more.
void stop_calling();

namespace detail {
extern uint32_t g_period;  // ticks per wrap (reload value + 1)
// Ticks of the wraps the handler counted, plus the reload value: the time is
// then this minus the counter.
extern uint64_t g_wrapped_ticks_plus_reload;
// The last time now() returned, so that it never goes back.
extern uint64_t g_last_now;
}  // namespace detail

// Ticks since start(), 64 bits, monotonic; callable from any context.
// Inline, since every event reads it. The
// wrapped ticks and the counter are read with interrupts masked, and a wrap
// whose exception is still pending is added. Exact as long as interrupts
// are never masked for a whole period (a second wrap would go uncounted).
__attribute__((always_inline)) inline uint64_t now() {
  using namespace cortex_m;
  const uint32_t mask = irq_save();
  uint64_t base = detail::g_wrapped_ticks_plus_reload;
  uint32_t value = syst_cvr();
  // A wrap the handler has not counted yet (interrupts are masked here, or
  // it happened just now): read the counter again, after the wrap for sure.
  if (scb_icsr() & kIcsrPendStSet) {
    value = syst_cvr();
    base += detail::g_period;
  }
  uint64_t ticks = base - value;
  // QEMU sets PENDSTSET from a timer callback that can run a little after
  // its counter already reloaded: a reading that would go back in time is
  // such a wrap, not flagged yet. (Real hardware flags it at the reload.)
  if (ticks < detail::g_last_now) ticks += detail::g_period;
  detail::g_last_now = ticks;
  irq_restore(mask);
  return ticks;
}

}  // namespace systick

#endif  // SPOOR_FIRMWARE_SYSTICK_CLOCK_H
