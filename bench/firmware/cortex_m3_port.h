// A Cortex-M3 port as inline functions (SPOOR_PORT_HEADER, spoor/port.h):
// the DWT cycle counter widened to 64 bits, one CPU, one thread id, PRIMASK
// for the masked reservation. The core reads the clock with interrupts
// masked, so widening needs no further care.
#ifndef SPOOR_BENCH_CORTEX_M3_PORT_H
#define SPOOR_BENCH_CORTEX_M3_PORT_H

#include <stdint.h>

// The last count read and the wraps seen, side by side: one address to load.
struct SpoorCycles {
  uint32_t last;
  uint32_t high;
};
inline constinit SpoorCycles g_spoor_cycles{};

__attribute__((always_inline)) inline uint64_t spoor_port_ticks(void) {
  const uint32_t now = *reinterpret_cast<volatile uint32_t*>(0xE0001004u);  // DWT_CYCCNT
  SpoorCycles& c = g_spoor_cycles;
  c.high += now < c.last;
  c.last = now;
  return (uint64_t{c.high} << 32) | now;
}
__attribute__((always_inline)) inline uint32_t spoor_port_cpu(void) { return 0; }
__attribute__((always_inline)) inline uint32_t spoor_port_thread(void) { return 0; }
__attribute__((always_inline)) inline uint32_t spoor_port_irq_save(void) {
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
  return primask;
}
__attribute__((always_inline)) inline void spoor_port_irq_restore(uint32_t state) {
  __asm__ volatile("msr primask, %0" : : "r"(state) : "memory");
}

#endif  // SPOOR_BENCH_CORTEX_M3_PORT_H
