// The platform contract (spoor/port.h) on a single-core Cortex-M3. Each hook
// is callable from thread mode and from any handler.
#include "spoor/port.h"

#include "cortex_m.h"
#include "systick_clock.h"

// The 64-bit SysTick time (systick_clock.h); its frequency goes into the
// trace's CLOCK block.
extern "C" uint64_t spoor_port_ticks(void) { return systick::now(); }

// One core.
extern "C" uint32_t spoor_port_cpu(void) { return 0; }

// The "thread" is the execution context: 0 for main, the exception number
// in a handler (15 for SysTick), so a trace tells interrupt events apart.
extern "C" uint32_t spoor_port_thread(void) { return cortex_m::ipsr(); }

// SPOOR_SINGLE_CORE: a record is reserved, and a 64-bit atomic updated, with
// interrupts masked (the Cortex-M3 has no 64-bit exclusive access, the M0+
// none at all). PRIMASK masks every interrupt that could raise an event.
extern "C" uint32_t spoor_port_irq_save(void) { return cortex_m::irq_save(); }
extern "C" void spoor_port_irq_restore(uint32_t state) { cortex_m::irq_restore(state); }
