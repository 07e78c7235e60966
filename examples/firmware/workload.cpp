#include "workload.h"

#include "firmware_events.h"
#include "semihosting.h"

namespace firmware {
namespace {

// The address of the instruction itself, as a program counter that
// events can carry (Thumb bit clear, as a symbolizer expects).
#define FIRMWARE_CURRENT_PC()                          \
  ({                                                   \
    const void* pc_;                                   \
    __asm__ volatile("adr %0, ." : "=r"(pc_));         \
    pc_;                                               \
  })

uint32_t g_next_counter = 0;
uint32_t g_main_events = 0;
// Written by the handler, read by main: volatile so main re-reads them.
volatile uint32_t g_handler_events = 0;
volatile uint32_t g_ticks = 0;

const char* g_pc_site_function = "";
uint32_t g_pc_site_line = 0;

// "FW" and the job number, readable at the end of the ID's text form.
spoor::ActivityId job_activity(uint32_t job) {
  spoor::ActivityId id;
  id.bytes[0] = 'F';
  id.bytes[1] = 'W';
  id.bytes[6] = 0x40;  // looks like an RFC 4122 version-4 ID
  id.bytes[8] = 0x80;
  id.bytes[12] = static_cast<uint8_t>(job >> 24);
  id.bytes[13] = static_cast<uint8_t>(job >> 16);
  id.bytes[14] = static_cast<uint8_t>(job >> 8);
  id.bytes[15] = static_cast<uint8_t>(job);
  return id;
}

}  // namespace

// Not inlined, so that the pc field names this function.
__attribute__((noinline)) void run_job(uint32_t job) {
  const spoor::ActivityId activity = job_activity(job);
  const void* pc = FIRMWARE_CURRENT_PC(); g_pc_site_line = __LINE__; g_pc_site_function = __func__;
  kJobStart.write_activity(activity, nullptr, job, pc);
  uint32_t checksum = 0;
  for (uint32_t i = 0; i < kCountersPerJob; ++i) {
    const uint32_t index = g_next_counter++;
    checksum += counter_value(index);
    kCounter.write(index, counter_value(index));
  }
  kMessage.write(kMessageText);
  kJobStop.write_activity(activity, nullptr, job, checksum);
  g_main_events += kEventsPerJob;
}

void on_tick() {
  const uint32_t tick = g_ticks + 1;
  g_ticks = tick;
  kTick.write(tick);
  g_handler_events = g_handler_events + 1;
}

uint32_t events_raised_in_main() { return g_main_events; }
uint32_t events_raised_in_handler() { return g_handler_events; }
uint32_t ticks_seen() { return g_ticks; }

void print_pc_site() {
  semihosting::print("pc site: ");
  semihosting::print(g_pc_site_function);
  semihosting::print_number(" ", g_pc_site_line);
}

}  // namespace firmware
