// A per-thread flag that stops the shim from tracing its own allocations
// (and those of anything it calls). initial-exec TLS: reading it is one
// %fs-relative load and never allocates, even before the shim is set up.
//
// It also tells the CPU sampler (samples.h) that the thread is inside the
// shim: a sample landing there is counted, not taken, since the shim's
// unwinder and module scan are not reentrant; the guard that lets go of the
// thread takes it (its stack is then the hook's, where the CPU time went).
#ifndef SPOOR_PRELOAD_REENTRY_GUARD_H
#define SPOOR_PRELOAD_REENTRY_GUARD_H

#include <stdint.h>

#include <atomic>

#include "spoor/config.h"

namespace spoor::preload {

extern constinit thread_local bool t_in_shim __attribute__((tls_model("initial-exec")));
// Sampling periods that expired while this thread was inside the shim.
extern constinit thread_local uint32_t t_deferred_sample_periods __attribute__((tls_model("initial-exec")));
// Writes them as samples of the calling thread's stack (samples.cpp).
void take_deferred_samples();

class ReentryGuard {
 public:
  ReentryGuard() : entered_(!t_in_shim) {
    t_in_shim = true;
    // A signal handler on this thread reads the flag: keep the compiler
    // from moving the store past the guarded code.
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  // Leaving: one more TLS load and a branch than before the sampler.
  ~ReentryGuard() {
    if (!entered_) return;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_in_shim = false;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (SPOOR_UNLIKELY(t_deferred_sample_periods != 0)) take_deferred_samples();
  }
  // False when this thread was already inside the shim.
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_REENTRY_GUARD_H
