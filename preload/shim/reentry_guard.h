// A per-thread flag that stops the shim from tracing its own allocations
// (and those of anything it calls). initial-exec TLS: reading it is one
// %fs-relative load and never allocates, even before the shim is set up.
#ifndef SPOOR_PRELOAD_REENTRY_GUARD_H
#define SPOOR_PRELOAD_REENTRY_GUARD_H

namespace spoor::preload {

extern constinit thread_local bool t_in_shim __attribute__((tls_model("initial-exec")));

class ReentryGuard {
 public:
  ReentryGuard() : entered_(!t_in_shim) { t_in_shim = true; }
  ~ReentryGuard() {
    if (entered_) t_in_shim = false;
  }
  // False when this thread was already inside the shim.
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_REENTRY_GUARD_H
