#include "systick_clock.h"

#include "cortex_m.h"

namespace systick {
namespace detail {
uint32_t g_period = 1;
uint64_t g_wrapped_ticks_plus_reload = 0;
uint64_t g_last_now = 0;
}  // namespace detail
namespace {
void (*volatile g_on_tick)() = nullptr;  // read by the handler, cleared by main
}  // namespace

using detail::g_period;
using detail::g_wrapped_ticks_plus_reload;

void start(uint32_t period_ticks, void (*on_tick)()) {
  using namespace cortex_m;
  syst_csr() = 0;
  g_period = period_ticks;
  g_wrapped_ticks_plus_reload = period_ticks - 1;
  detail::g_last_now = 0;
  g_on_tick = on_tick;
  syst_rvr() = period_ticks - 1;
  syst_cvr() = 0;  // any write clears the counter; it loads the reload value on the next tick
  syst_csr() = kSystEnable | kSystCpuClock;
  // Until that first reload the counter reads 0, which now() would take as
  // a full period: wait for it before time starts (and before the
  // exception, which this first reload must not raise).
  while (syst_cvr() == 0) {
  }
  syst_csr() = kSystEnable | kSystCpuClock | kSystTickInt;
}

void stop_calling() { g_on_tick = nullptr; }

}  // namespace systick

// Exception 15, named in the vector table (startup.cpp).
extern "C" void systick_handler() {
  systick::detail::g_wrapped_ticks_plus_reload += systick::detail::g_period;
  void (*const on_tick)() = systick::g_on_tick;
  if (on_tick != nullptr) on_tick();
}
