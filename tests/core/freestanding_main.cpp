// The core with no C library at all: linked with -nostdlib -static, with its
// own _start, the platform hooks, and memcpy/memset (the only libc the core
// may use). It raises events into a ring in static RAM, drains it into a
// trace in a static buffer, checks the result and exits through a raw
// syscall. If the core referenced anything else, linking this would fail.
#include "spoor/spoor.hpp"

// memcpy and memset as byte loops, shared with the bare-metal benchmarks.
// -fno-tree-loop-distribute-patterns (set by the test) keeps GCC from
// turning these loops into calls to themselves.
#include "../../bench/firmware/byte_loops.h"

extern "C" {
uint64_t g_fake_ticks = 1000;
uint64_t spoor_port_ticks(void) { return g_fake_ticks += 3; }
uint32_t spoor_port_cpu(void) { return 0; }
uint32_t spoor_port_thread(void) { return 1; }
}

namespace {

constinit spoor::Provider g_firmware{"Spoor.Test.Freestanding"};
SPOOR_EVENT(kThree, g_firmware, (spoor::EventInfo{.name = "Three", .id = 1}),
            spoor::Field<int32_t>{"a"}, spoor::Field<int32_t>{"b"}, spoor::Field<spoor::Str>{"s"});

alignas(64) uint8_t g_ring_memory[8192];
uint8_t g_trace[16384];
size_t g_trace_used = 0;

bool to_memory(void*, const void* data, size_t size) {
  if (g_trace_used + size > sizeof g_trace) return false;
  memcpy(g_trace + g_trace_used, data, size);
  g_trace_used += size;
  return true;
}

[[noreturn]] void exit_with(long code) {
#if defined(__x86_64__)
  __asm__ volatile("syscall" : : "a"(60), "D"(code) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
  register long x0 __asm__("x0") = code;
  register long x8 __asm__("x8") = 93;
  __asm__ volatile("svc 0" : : "r"(x0), "r"(x8) : "memory");
#elif defined(__riscv)
  register long a0 __asm__("a0") = code;
  register long a7 __asm__("a7") = 93;
  __asm__ volatile("ecall" : : "r"(a0), "r"(a7) : "memory");
#endif
  for (;;) {
  }
}

int run() {
  if (spoor::register_provider(g_firmware) != spoor::Status::ok) return 10;
  spoor::RingView view;
  if (spoor::ring_init(g_ring_memory, sizeof g_ring_memory, 1, 256, &view) != spoor::Status::ok)
    return 11;
  spoor::ring_install(view);
  spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(g_firmware.control()),
                            {true, 0, ~0ull, 0});
  for (int i = 0; i < 5; ++i) kThree.write(i, -i, "hello");
  if (spoor::ring_flush(view, 0) != spoor::Status::ok) return 12;

  spoor::TraceWriter writer(spoor::Sink{nullptr, to_memory});
  if (writer.file_header() != spoor::Status::ok) return 13;
  if (writer.stream(0, 1, 0) != spoor::Status::ok) return 14;
  if (writer.new_metadata(1) != spoor::Status::ok) return 15;
  spoor::Packet packet;
  if (spoor::ring_peek(view, 0, g_fake_ticks, false, &packet) != spoor::Status::ok) return 16;
  if (packet.record_count != 5) return 17;
  // The first record carries the thread id (4 bytes); the others are the
  // format's compact case: 10 header + 4 + 4 + 1 + 5 = 24 bytes.
  uint16_t first = 0, second = 0;
  memcpy(&first, packet.data, 2);
  memcpy(&second, packet.data + first, 2);
  if (first != 28 || second != 24) return 18;
  if (writer.packet(0, packet) != spoor::Status::ok) return 19;
  spoor::ring_release(view, 0, packet);
  if (g_trace[0] != 'S' || g_trace[7] != 'C') return 20;
  return 0;
}

}  // namespace

extern "C" __attribute__((force_align_arg_pointer, used)) void _start() { exit_with(run()); }
