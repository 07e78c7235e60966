// Spoor on a Cortex-M3 (QEMU's mps2-an385): the core in a bare-metal program
// with its buffers in static RAM. Jobs run from the main loop and ticks from
// the SysTick handler raise events; the trace goes to a host file through
// semihosting, either at the end (the dump target, firmware.elf) or packet by
// packet while the program runs (FIRMWARE_STREAMING, firmware-stream.elf).
// The program prints what it raised and what the core lost, and exits 0 when
// every event raised was written or counted lost.
#include "bench.h"
#include "cortex_m.h"
#include "firmware_events.h"
#include "options.h"
#include "semihosting.h"
#include "systick_clock.h"
#include "trace_file.h"
#include "workload.h"

#ifndef FIRMWARE_STREAMING
#define FIRMWARE_STREAMING 0
#endif
// The ring's static memory: the dump target keeps a whole run; the
// streaming target only needs a few packets between drains.
#ifndef FIRMWARE_RING_BYTES
#define FIRMWARE_RING_BYTES (FIRMWARE_STREAMING ? 4096 : 16384)
#endif

namespace {

constexpr bool kStreaming = FIRMWARE_STREAMING != 0;
constexpr uint32_t kDefaultJobs = kStreaming ? 3000 : 24;
// A tick every 250 us; main waits for one every other job, so the ticks'
// events interleave with the jobs'.
constexpr uint32_t kTickPeriod = systick::kHz / 4000;
constexpr uint32_t kJobsPerTickWait = 2;

alignas(64) uint8_t g_ring_memory[FIRMWARE_RING_BYTES];

// Exit codes a test can tell apart.
enum Exit : int {
  kOk = 0,
  kMismatch = 1,      // raised != written + lost
  kBadOptions = 2,
  kSetupFailed = 3,   // provider or ring
  kWriteFailed = 4,   // the host file
};

void wait_for_tick() {
  const uint32_t seen = firmware::ticks_seen();
  while (firmware::ticks_seen() == seen) cortex_m::wait_for_interrupt();
}

}  // namespace

int main() {
  const firmware::Options options = firmware::read_options();
  if (options.error != nullptr) {
    semihosting::print("firmware: cannot use option '");
    semihosting::print(options.error);
    semihosting::print("'; options: --out FILE --jobs N --buffer BYTES --packet BYTES --bench N\n");
    return kBadOptions;
  }
  const uint32_t ring_bytes =
      options.buffer_bytes != 0 && options.buffer_bytes < sizeof g_ring_memory
          ? options.buffer_bytes
          : static_cast<uint32_t>(sizeof g_ring_memory);
  spoor::RingView ring;
  if (spoor::register_provider(firmware::g_provider) != spoor::Status::ok ||
      spoor::ring_init(g_ring_memory, ring_bytes, 1, options.packet_bytes, &ring) !=
          spoor::Status::ok) {
    semihosting::print("firmware: cannot set up the provider or the ring (--buffer too small?)\n");
    return kSetupFailed;
  }
  spoor::ring_install(ring);
  spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(firmware::g_provider.control()),
                            spoor::EnableState{true, 0, ~0ull, 0});
  semihosting::print_number("buffer bytes ", ring_bytes);
  semihosting::print_number("packet bytes ", options.packet_bytes);
  if (options.bench_events != 0) return firmware::run_bench(ring, options.bench_events);

  firmware::TraceFile file;
  if (kStreaming && !file.open(options.out)) {
    semihosting::print("firmware: cannot create the trace file\n");
    return kWriteFailed;
  }
  systick::start(kTickPeriod, firmware::on_tick);
  cortex_m::irq_enable();
  const uint32_t jobs = options.jobs != 0 ? options.jobs : kDefaultJobs;
  for (uint32_t job = 1; job <= jobs; ++job) {
    firmware::run_job(job);
    if (job % kJobsPerTickWait == 0) wait_for_tick();
    if (kStreaming) file.drain(ring);
  }
  // No event after this point: the handler keeps counting the clock's
  // wraps but raises nothing.
  systick::stop_calling();

  if (!kStreaming && !file.open(options.out)) {
    semihosting::print("firmware: cannot create the trace file\n");
    return kWriteFailed;
  }
  const bool written = file.finish(ring);
  const spoor::DrainTotals& totals = file.totals();
  const uint64_t raised = uint64_t{firmware::events_raised_in_main()} +
                          firmware::events_raised_in_handler();
  semihosting::print_number("raised in main ", firmware::events_raised_in_main());
  semihosting::print_number("raised in handler ", firmware::events_raised_in_handler());
  semihosting::print_number("raised ", raised);
  semihosting::print_number("written ", totals.events);
  semihosting::print_number("lost ", totals.lost);
  semihosting::print_number("packets ", totals.packets);
  firmware::print_pc_site();
  if (!written) {
    semihosting::print("firmware: writing the trace file failed\n");
    return kWriteFailed;
  }
  return totals.events + totals.lost == raised ? kOk : kMismatch;
}
