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
// Set while a hook called by such a handler records (ReentryGuard).
extern constinit thread_local bool t_handler_in_hook __attribute__((tls_model("initial-exec")));
// Set while an outermost hook calls the real function under its guard
// (RealCall below): the shim's own state is not being changed then.
extern constinit thread_local bool t_in_real_call __attribute__((tls_model("initial-exec")));
// Sampling periods that expired while this thread was inside the shim,
// and kRulesToBuild when a sample's walk missed unwind rules: both taken at
// the guard's release, for one load and branch there.
extern constinit thread_local uint32_t t_deferred_sample_periods __attribute__((tls_model("initial-exec")));
inline constexpr uint32_t kRulesToBuild = 1u << 31;
// Writes them as samples of the calling thread's stack, and builds the
// rules (samples.cpp).
void take_deferred_samples();

// Three ways a hook can find its thread:
//   - outside the shim: entered(), and the hook may use everything;
//   - inside it, under a signal handler of the program's that interrupted
//     the shim (and not in another hook of that handler's, as operator
//     new's malloc): in_handler(). The hook records with only what is safe
//     there, the ring write and at most a one-frame stack (the hook's
//     return address): the unwinder, the module scan and the thread's
//     stdio runs may be mid-update under the handler;
//   - inside it otherwise (the shim's own calls): nothing to record.
// The second and third cost nothing on the first's path: only a thread
// already inside the shim reads the handler count.
class ReentryGuard {
 public:
  ReentryGuard() {
    if (SPOOR_LIKELY(!t_in_shim)) {
      mode_ = Mode::entered;
      t_in_shim = true;
    } else if (SPOOR_UNLIKELY(t_handlers_over_shim != 0) && !t_handler_in_hook) {
      mode_ = Mode::in_handler;
      t_handler_in_hook = true;
    } else {
      mode_ = Mode::inside;
    }
    // A signal handler on this thread reads the flags: keep the compiler
    // from moving the stores past the guarded code.
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  // Leaving: one more TLS load and a branch than before the sampler.
  ~ReentryGuard() {
    if (SPOOR_UNLIKELY(mode_ != Mode::entered)) {
      if (mode_ == Mode::in_handler) t_handler_in_hook = false;
      return;
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_in_shim = false;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (SPOOR_UNLIKELY(t_deferred_sample_periods != 0)) take_deferred_samples();
  }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;

  // The thread was outside the shim.
  bool entered() const { return mode_ == Mode::entered; }
  // A signal handler that interrupted the shim made the call.
  bool in_handler() const { return mode_ == Mode::in_handler; }
  // Either: the call is the program's, to record.
  bool records() const { return mode_ != Mode::inside; }
  // For a hook that cannot record a handler's call (the stdio layer's
  // runs are per-thread state): entered(), and a handler's call is counted
  // as a lost event instead, so that none goes missing silently.
  bool entered_else_count_lost() const {
    if (SPOOR_UNLIKELY(mode_ == Mode::in_handler)) count_handler_call_lost();
    return mode_ == Mode::entered;
  }

 private:
  enum class Mode : uint8_t { entered, in_handler, inside };
  Mode mode_;
};

// Marks a hook's call of the real function it wraps, when the hook holds
// its guard across the call (operator new and delete, so that libstdc++'s
// malloc is not counted again; the aligned allocators and reallocarray;
// mmap, munmap and mremap) and is the thread's
// outermost: a CPU sample landing there is the program's time (the
// allocator's, the kernel's unmapping), taken at once rather than at the
// guard's release, where its stack would put that time on the shim.
// Two TLS stores, on the outermost hook only.
class RealCall {
 public:
  explicit RealCall(const ReentryGuard& guard) : marked_(guard.entered()) {
    if (marked_) {
      t_in_real_call = true;
      std::atomic_signal_fence(std::memory_order_seq_cst);
    }
  }
  ~RealCall() {
    if (marked_) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      t_in_real_call = false;
    }
  }
  RealCall(const RealCall&) = delete;
  RealCall& operator=(const RealCall&) = delete;

 private:
  bool marked_;
};

// fn(args...) as a RealCall of the hook holding `guard`.
template <class Fn, class... Args>
inline __attribute__((always_inline)) auto call_real(const ReentryGuard& guard, Fn fn, Args... args) {
  const RealCall real(guard);
  return fn(args...);
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_REENTRY_GUARD_H
