#include "bench.h"

#include "firmware_events.h"
#include "semihosting.h"
#include "systick_clock.h"

namespace firmware {
namespace {

constexpr uint32_t kBatch = 100;                                // events per timed batch
constexpr uint32_t kInstructionsPerTick = 1'000'000'000 / systick::kHz;  // under -icount shift=0

// Ticks for `count` Counter writes. noinline: the loop is the same code
// whether the provider is on or off.
__attribute__((noinline)) uint64_t time_writes(uint32_t first, uint32_t count) {
  const uint64_t t0 = systick::now();
  for (uint32_t i = first; i < first + count; ++i) kCounter.write(i, i);
  return systick::now() - t0;
}

// Ticks for `count` calls of the clock hook, part of every enabled event.
__attribute__((noinline)) uint64_t time_clock_hook(uint32_t count) {
  const uint64_t t0 = systick::now();
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t t = spoor_port_ticks();
    __asm__ volatile("" ::"r"(static_cast<uint32_t>(t)), "r"(static_cast<uint32_t>(t >> 32)));
  }
  return systick::now() - t0;
}

// Ticks for `count` turns of an empty loop: the loop's own cost.
__attribute__((noinline)) uint64_t time_empty_loop(uint32_t count) {
  const uint64_t t0 = systick::now();
  for (uint32_t i = 0; i < count; ++i) __asm__ volatile("");
  return systick::now() - t0;
}

// Ticks of 4000 instructions (a two-instruction loop run 2000 times):
// checks that the clock counts instructions, 100 ticks at one instruction
// per nanosecond.
__attribute__((noinline)) uint64_t time_4000_instructions() {
  const uint64_t t0 = systick::now();
  uint32_t n = 2000;
  __asm__ volatile("1: subs %0, #1\n\tbne 1b" : "+r"(n)::"cc");
  return systick::now() - t0;
}

void set_enabled(bool on) {
  spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(g_provider.control()),
                            spoor::EnableState{on, 0, ~0ull, 0});
}

bool discard(void*, const void*, size_t) { return true; }

void print_per_event(const char* label, uint64_t ticks, uint32_t events) {
  // In hundredths of an instruction, printed as "12.34".
  const uint64_t centi = ticks * kInstructionsPerTick * 100 / events;
  char text[96];
  size_t n = 0;
  for (const char* p = label; *p != '\0' && n < 64; ++p) text[n++] = *p;
  char digits[20];
  size_t d = 0;
  for (uint64_t whole = centi / 100; d == 0 || whole != 0; whole /= 10)
    digits[d++] = static_cast<char>('0' + whole % 10);
  while (d > 0) text[n++] = digits[--d];
  text[n++] = '.';
  text[n++] = static_cast<char>('0' + centi / 10 % 10);
  text[n++] = static_cast<char>('0' + centi % 10);
  text[n++] = '\n';
  text[n] = '\0';
  semihosting::print(text);
}

}  // namespace

int run_bench(const spoor::RingView& ring, uint32_t events) {
  systick::start(1u << 24, nullptr);  // no wrap within a batch: 0.67 s of virtual time
  spoor::TraceWriter nowhere(spoor::Sink{nullptr, discard});
  spoor::DrainTotals totals;
  uint64_t enabled_ticks = 0, disabled_ticks = 0;
  uint32_t done = 0;
  while (done < events) {
    const uint32_t count = events - done < kBatch ? events - done : kBatch;
    set_enabled(true);
    enabled_ticks += time_writes(done, count);
    set_enabled(false);
    disabled_ticks += time_writes(done, count);
    spoor::flush_ring(ring);
    spoor::drain_ring(ring, nowhere, /*final=*/false, totals);
    done += count;
  }
  const uint64_t lost = spoor::ring_lost(ring, 0);
  const uint64_t clock_ticks = time_clock_hook(events);
  const uint64_t loop_ticks = time_empty_loop(events);
  semihosting::print_number("bench events ", events);
  semihosting::print_number("bench ticks for 4000 instructions ", time_4000_instructions());
  semihosting::print_number("bench enabled ticks ", enabled_ticks);
  semihosting::print_number("bench disabled ticks ", disabled_ticks);
  print_per_event("bench instructions per enabled event (loop included) ", enabled_ticks, events);
  print_per_event("bench instructions per disabled event (loop included) ", disabled_ticks, events);
  print_per_event("bench instructions per event, enabled minus disabled ",
                  enabled_ticks > disabled_ticks ? enabled_ticks - disabled_ticks : 0, events);
  print_per_event("bench instructions per clock hook call (loop included) ", clock_ticks, events);
  print_per_event("bench instructions per empty loop turn ", loop_ticks, events);
  semihosting::print_number("bench lost ", lost);
  return lost == 0 ? 0 : 1;
}

}  // namespace firmware
