// The Linux port's out-of-line parts (spoor/port.h): tid cache, CPU id
// fallback, clock fallback. The only core-adjacent file that includes OS
// headers; it is its own target so firmware builds never see it.
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "spoor/port.h"

namespace spoor::port {
constinit thread_local uint32_t t_thread_id __attribute__((tls_model("initial-exec"))) = 0;
constinit ptrdiff_t g_rseq_cpu_offset = 0;

namespace {
// glibc registers rseq for every thread or for none (tunable
// glibc.pthread.rseq=0), so one process-wide answer suffices.
__attribute__((constructor)) void find_rseq_area() {
  if (&__rseq_size != nullptr && __rseq_size != 0) g_rseq_cpu_offset = __rseq_offset + 4;
}

// After fork the child's thread has a new tid; forget the cached one.
void reset_tid_in_child() { t_thread_id = 0; }
[[maybe_unused]] const int g_atfork = pthread_atfork(nullptr, nullptr, reset_tid_in_child);
}  // namespace
}  // namespace spoor::port

extern "C" uint32_t spoor_port_cpu_slow(void) {
  int cpu = sched_getcpu();
  return cpu < 0 ? 0u : static_cast<uint32_t>(cpu);
}

extern "C" uint32_t spoor_port_thread_slow(void) {
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  spoor::port::t_thread_id = tid;
  return tid;
}

extern "C" uint64_t spoor_port_ticks_fallback(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
