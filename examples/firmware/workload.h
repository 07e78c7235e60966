// What the example traces: jobs run from the main loop, ticks from the
// SysTick handler. Every value is a function of its index, so a test can
// check each decoded event.
#ifndef SPOOR_FIRMWARE_WORKLOAD_H
#define SPOOR_FIRMWARE_WORKLOAD_H

#include <stdint.h>

namespace firmware {

// Counter events per job, and the value the i-th counter event (counting
// from 0 over the whole run) carries.
inline constexpr uint32_t kCountersPerJob = 8;
constexpr uint32_t counter_value(uint32_t index) { return index * 3 + 7; }

// The Message event's text, once per job.
inline constexpr char kMessageText[] = "job done";

// Events one job raises: JobStart, the counters, Message, JobStop.
inline constexpr uint32_t kEventsPerJob = kCountersPerJob + 3;

// Runs job number `job` (from 1): JobStart and JobStop share the activity ID
// that job_activity(job) makes; JobStop's checksum is the sum of the job's
// counter values.
void run_job(uint32_t job);

// The SysTick handler's work: one Tick event numbered from 1.
void on_tick();

// Events raised so far (written or lost) by run_job and by on_tick.
uint32_t events_raised_in_main();
uint32_t events_raised_in_handler();

// Ticks seen by on_tick.
uint32_t ticks_seen();

// Prints "pc site: FUNCTION LINE": where JobStart's pc field points, so a
// test can check what `spoor symbolize` makes of it.
void print_pc_site();

}  // namespace firmware

#endif  // SPOOR_FIRMWARE_WORKLOAD_H
