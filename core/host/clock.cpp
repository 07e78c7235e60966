// Clock calibration: sample ticks against CLOCK_MONOTONIC.
#include "spoor/host/clock.h"

#include <time.h>

#include "spoor/port.h"

namespace spoor::host {
namespace {

int64_t now_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

format::ClockSource tick_source() {
#if defined(__x86_64__)
  return format::kClockTsc;
#elif defined(__aarch64__)
  return format::kClockCntvct;
#else
  return format::kClockMonotonicNs;
#endif
}

ClockSample sample_clock() {
  ClockSample best{};
  int64_t best_window = INT64_MAX;
  for (int i = 0; i < 7; ++i) {
    const int64_t before = now_ns(CLOCK_MONOTONIC);
    const uint64_t ticks = spoor_port_ticks();
    const int64_t after = now_ns(CLOCK_MONOTONIC);
    if (after - before < best_window) {
      best_window = after - before;
      best.ticks = ticks;
      best.monotonic_ns = before + (after - before) / 2;
    }
  }
  best.realtime_ns = now_ns(CLOCK_REALTIME) - (now_ns(CLOCK_MONOTONIC) - best.monotonic_ns);
  return best;
}

format::ClockBlock clock_block(const ClockSample& ref, const ClockSample& later) {
  format::ClockBlock c{};
  c.source = tick_source();
  c.tick_ref = ref.ticks;
  c.monotonic_ns_ref = ref.monotonic_ns;
  c.realtime_ns_ref = ref.realtime_ns;
  if (c.source == format::kClockMonotonicNs) {
    c.freq_millihz = 1000000000ull * 1000;
    return c;
  }
  const int64_t dns = later.monotonic_ns - ref.monotonic_ns;
  const uint64_t dticks = later.ticks - ref.ticks;
  if (dns <= 0 || dticks == 0) {
    c.freq_millihz = 1000000000ull * 1000;  // no span to measure: assume 1 GHz
    return c;
  }
  c.freq_millihz = static_cast<uint64_t>(static_cast<long double>(dticks) * 1e12L /
                                         static_cast<long double>(dns));
  return c;
}

}  // namespace spoor::host
