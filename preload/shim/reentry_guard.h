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

#include "shim_state.h"
#include "spoor/config.h"

namespace spoor::preload {

extern constinit thread_local bool t_in_shim __attribute__((tls_model("initial-exec")));
// Signal handlers of the program's running now on this thread that
// interrupted it inside the shim (signal_hooks.cpp counts them in and out).
// The flag above stays set for them: the shim's unwinder, module scan and
// per-thread state may be mid-update under them.
extern constinit thread_local uint32_t t_handlers_over_shim __attribute__((tls_model("initial-exec")));
// Set while a hook called by such a handler records (HandlerGuard).
extern constinit thread_local bool t_handler_in_hook __attribute__((tls_model("initial-exec")));
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
  // For a hook that records its call only when entered(): false also
  // counts the call as a lost event when a signal handler that interrupted
  // the shim made it (the shim's own calls are not events), so that none
  // goes missing silently. Only the stdio hooks count such calls: the
  // others record them (HandlerGuard, IoRecording in io_interpose.h).
  bool records() const {
    if (SPOOR_LIKELY(entered_)) return true;
    if (SPOOR_UNLIKELY(t_handlers_over_shim != 0) && !t_handler_in_hook) count_handler_call_lost();
    return false;
  }

 private:
  bool entered_;
};

// In a hook whose ReentryGuard was not entered: whether a signal handler
// that interrupted the shim made the call (and not another hook of that
// handler's, such as operator new's malloc). Such a call is recorded with
// only what is safe there: the ring write (lock-free) and a one-frame
// stack, the hook's return address. Held across the real call like the
// ReentryGuard it stands beside. Free when `guard_entered`: no TLS access.
class HandlerGuard {
 public:
  explicit HandlerGuard(bool guard_entered)
      : entered_(!guard_entered && SPOOR_UNLIKELY(t_handlers_over_shim != 0) && !t_handler_in_hook) {
    if (entered_) t_handler_in_hook = true;
  }
  ~HandlerGuard() {
    if (entered_) t_handler_in_hook = false;
  }
  HandlerGuard(const HandlerGuard&) = delete;
  HandlerGuard& operator=(const HandlerGuard&) = delete;
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_REENTRY_GUARD_H
