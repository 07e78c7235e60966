// The platform contract (spoor/port.h) on a single-core Cortex-M3. Each hook
// is callable from thread mode and from any handler.
//
// Two ways to hand them to the core, chosen by FIRMWARE_INLINE_PORT in
// CMakeLists.txt:
//   - as the core's SPOOR_PORT_HEADER: spoor/port.h includes this file, and
//     the hooks are inline in the core and in every event write (no call);
//   - as extern "C" functions, defined once by port_hooks.cpp.
#ifndef SPOOR_FIRMWARE_PORT_HOOKS_H
#define SPOOR_FIRMWARE_PORT_HOOKS_H

#include <stdint.h>

#include "cortex_m.h"
#include "systick_clock.h"

#if defined(SPOOR_PORT_HEADER)
#define FIRMWARE_PORT_HOOK __attribute__((always_inline)) inline
#else
#define FIRMWARE_PORT_HOOK extern "C"
#endif

// The 64-bit SysTick time (systick_clock.h, ~11 instructions); its
// frequency goes into the trace's CLOCK block.
FIRMWARE_PORT_HOOK uint64_t spoor_port_ticks(void) { return systick::now(); }

// One core.
FIRMWARE_PORT_HOOK uint32_t spoor_port_cpu(void) { return 0; }

// The "thread" is the execution context: 0 for main, the exception number
// in a handler (15 for SysTick), so a trace tells interrupt events apart.
FIRMWARE_PORT_HOOK uint32_t spoor_port_thread(void) { return cortex_m::ipsr(); }

// SPOOR_SINGLE_CORE: a record is reserved, and a 64-bit atomic updated, with
// interrupts masked (the Cortex-M3 has no 64-bit exclusive access, the M0+
// none at all). PRIMASK masks every interrupt that could raise an event.
FIRMWARE_PORT_HOOK uint32_t spoor_port_irq_save(void) { return cortex_m::irq_save(); }
FIRMWARE_PORT_HOOK void spoor_port_irq_restore(uint32_t state) { cortex_m::irq_restore(state); }

#undef FIRMWARE_PORT_HOOK

#endif  // SPOOR_FIRMWARE_PORT_HOOKS_H
