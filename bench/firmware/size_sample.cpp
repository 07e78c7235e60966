// The firmware size figure's program (bench/firmware_size.sh): one provider,
// three events raised from a loop, the ring in static RAM, and (with
// SAMPLE_DUMP=1) a dump of the trace through TraceWriter into a sink. Built
// with SPOOR_COMPILE_OUT=1 too; the differences are what tracing costs the
// image. Linked -nostdlib with --gc-sections, so nothing unused is counted.
#include <stddef.h>
#include <stdint.h>

#include "spoor/spoor.hpp"

#include "byte_loops.h"

namespace {
volatile uint32_t g_work;  // what the loop does besides tracing
}

#ifndef SAMPLE_DUMP
#define SAMPLE_DUMP 1
#endif

#if !SPOOR_COMPILE_OUT && !defined(SPOOR_PORT_HEADER)
extern "C" {
// The platform hooks a Cortex-M3 program supplies: the DWT cycle counter
// (widened to 64 bits by the caller's overflow count, kept trivial here),
// one CPU, one thread id, PRIMASK for the masked reservation.
uint64_t spoor_port_ticks(void) { return *reinterpret_cast<volatile uint32_t*>(0xE0001004u); }
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
SPOOR_EVENT(kTick, g_app, (spoor::EventInfo{.name = "Tick", .id = 2}),
            spoor::Field<uint32_t>{"count"});
SPOOR_EVENT(kMessage, g_app, (spoor::EventInfo{.name = "Message", .id = 3, .level = spoor::Level::warning}),
            spoor::Field<spoor::Str>{"text"});

#if !SPOOR_COMPILE_OUT
namespace {
alignas(64) uint8_t g_ring_memory[1024];

[[maybe_unused]] bool to_port(void*, const void* data, size_t size) {
  // An ITM stimulus port stands in for the host link.
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) *reinterpret_cast<volatile uint8_t*>(0xE0000000u) = p[i];
  return true;
}
}  // namespace
#endif

int main() {
#if !SPOOR_COMPILE_OUT
  spoor::register_provider(g_app);
  spoor::RingView ring;
  spoor::ring_init(g_ring_memory, sizeof g_ring_memory, 1, 256, &ring);
  spoor::ring_install(ring);
  spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(g_app.control()),
                            {true, 0, ~0ull, 0});
#endif
  for (uint32_t i = 0; i < 100; ++i) {
    g_work = g_work + i;
    kSample.write(g_work, static_cast<uint16_t>(i));
    if ((i & 15) == 0) kTick.write(i);
    if (i == 50) kMessage.write("halfway");
  }
#if !SPOOR_COMPILE_OUT && SAMPLE_DUMP
  spoor::TraceWriter writer(spoor::Sink{nullptr, to_port});
  writer.file_header();
  writer.process(1, 0, "firmware", "", 0);
  writer.stream(0, 1, 0);
  spoor::DrainTotals totals;
  spoor::flush_ring(ring);
  spoor::drain_ring(ring, writer, true, totals, [&] { writer.new_metadata(1); });
  spoor::end_streams(ring, writer, totals);
#endif
  return 0;
}

extern "C" [[noreturn]] void reset_handler() {
  main();
  for (;;) {
  }
}
