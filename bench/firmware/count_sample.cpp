// Instructions per event, counted by executing (bench/firmware_size.sh):
// a bare-metal program for QEMU's mps2-an385 (Cortex-M3) that raises a
// 2-field event many times and exits through semihosting. QEMU logs every
// instruction it executes; the script counts those inside the event's call
// site (raise_sample), the core (ring_write_small and what it calls) and the
// platform hooks below, event by event.
#include <stddef.h>
#include <stdint.h>

#include "spoor/spoor.hpp"

#include "byte_loops.h"

#if !defined(SPOOR_PORT_HEADER)
// The hooks as functions the core calls (the default way a firmware ports
// Spoor); with SPOOR_PORT_HEADER they come inline from cortex_m3_port.h:
// the DWT cycle counter widened to 64 bits (the core reads the clock with
// interrupts masked), one thread id, PRIMASK for the masked reservation.
namespace {
uint32_t g_cycles_high = 0;
uint32_t g_cycles_last = 0;
}  // namespace
extern "C" {
uint64_t spoor_port_ticks(void) {
  const uint32_t now = *reinterpret_cast<volatile uint32_t*>(0xE0001004u);  // DWT_CYCCNT
  if (now < g_cycles_last) ++g_cycles_high;
  g_cycles_last = now;
  return (uint64_t{g_cycles_high} << 32) | now;
}
uint32_t spoor_port_cpu(void) { return 0; }
uint32_t spoor_port_thread(void) { return 0; }
uint32_t spoor_port_irq_save(void) {
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
  return primask;
}
void spoor_port_irq_restore(uint32_t state) {
  __asm__ volatile("msr primask, %0" : : "r"(state) : "memory");
}
}
#endif

constinit spoor::Provider g_app{"Contoso.Firmware"};
SPOOR_EVENT(kSample, g_app, (spoor::EventInfo{.name = "Sample", .id = 1}),
            spoor::Field<uint32_t>{"value"}, spoor::Field<uint16_t>{"channel"});

__attribute__((noinline)) void raise_sample(uint32_t value, uint16_t channel) {
  kSample.write(value, channel);
}

namespace {
alignas(64) uint8_t g_ring_memory[8192];

[[noreturn]] void semihosting_exit(uint32_t code) {
  static uint32_t block[2];
  block[0] = 0x20026;  // ADP_Stopped_ApplicationExit
  block[1] = code;
  register uint32_t r0 __asm__("r0") = 0x20;  // SYS_EXIT_EXTENDED
  register uint32_t* r1 __asm__("r1") = block;
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {
  }
}
}  // namespace

extern "C" [[noreturn]] void reset_handler() {
  spoor::register_provider(g_app);
  spoor::RingView ring;
  spoor::ring_init(g_ring_memory, sizeof g_ring_memory, 1, 1024, &ring);
  spoor::ring_install(ring);
  spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(g_app.control()),
                            {true, 0, ~0ull, 0});
  for (uint32_t i = 0; i < 200; ++i) raise_sample(i, static_cast<uint16_t>(i));
  semihosting_exit(0);
}

// The vector table's first two words: the initial stack pointer (top of
// RAM) and the reset handler.
struct Vectors {
  uint32_t initial_sp;
  void (*reset)();
};
extern "C" const Vectors g_vectors __attribute__((section(".vectors"), used)) = {0x20400000u,
                                                                                 reset_handler};
