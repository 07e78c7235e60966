// The fast unwinder's shared cache of x86-64 unwind rules, one per code
// address, for all threads: read without locks, filled on a miss by one
// thread at a time (with libdw, unwind_rule.h), emptied by a new
// generation when modules are unloaded.
#ifndef SPOOR_PRELOAD_RULE_CACHE_H
#define SPOOR_PRELOAD_RULE_CACHE_H

#include <atomic>
#include <cstdint>

namespace spoor::preload {

// Bits 0..15: module unloads in progress (captures then go to libunwind);
// bits 16 and up: the generation, bumped when an unload ends. Read once
// per capture; rules and records of one generation are not used in another.
extern std::atomic<uint64_t> g_unwind_epoch;
inline constexpr uint64_t kUnloadsInProgress = 0xFFFF;

// Maps the table and registers the fork handlers; false when it cannot.
bool init_rule_cache();
// Whether init_rule_cache succeeded (one load: read on every capture).
extern std::atomic<bool> g_rule_cache_ready;
inline bool rule_cache_ready() { return g_rule_cache_ready.load(std::memory_order_acquire); }

// The rule at `address` (an UnwindRule's bytes) for the capture's epoch:
// from the table (a multiply and a slot's loads), else built with libdw
// and cached (microseconds; allocates), after waiting (at most 50 ms) for
// another thread building one. 0 (kNone) when this capture may not build
// one, or the wait ran out: it falls back to libunwind.
uint64_t cached_rule(uint64_t address, uint64_t epoch);

// Building a rule allocates (libdw) with the program's malloc. When that
// malloc is not glibc's (a program that defines its own, as rustc's
// jemalloc does, or a malloc library loaded after the shim), a hook the
// allocator itself calls while it holds its lock (mmap, to get more
// memory) must not build one: the allocation would wait on that lock
// forever. Then only captures made after the allocator returned (the
// shim's allocation hooks, in a RuleBuildingAllowed scope) build rules;
// any other capture that misses falls back to libunwind, which does not
// allocate. note_program_allocator() decides at attach.
void note_program_allocator(bool glibc);
extern constinit thread_local bool t_after_allocator_returned;
struct AfterAllocatorReturned {
  bool was = t_after_allocator_returned;
  AfterAllocatorReturned() { t_after_allocator_returned = true; }
  ~AfterAllocatorReturned() { t_after_allocator_returned = was; }
  AfterAllocatorReturned(const AfterAllocatorReturned&) = delete;
  AfterAllocatorReturned& operator=(const AfterAllocatorReturned&) = delete;
};

// Set while the thread runs the real allocator under a heap hook that
// calls it outside its ReentryGuard (malloc, free, calloc, realloc; the
// others hold the guard, under which a handler's calls capture no stack,
// and the sampler walks with cached rules only, reentry_guard.h's
// RealCall). A signal handler that interrupts it may call a hooked
// function (a program's SIGINT handler writing a message; the shim's
// sampler), whose capture must then not build a rule: libdw would allocate
// inside the interrupted malloc (a wait on the arena lock this thread
// holds, or a corrupt tcache). That capture falls back to libunwind, which
// does not allocate. Two thread-local stores per call.
extern constinit thread_local bool t_in_real_allocator;
template <class Fn, class... Args>
inline __attribute__((always_inline)) auto call_real_allocator(Fn fn, Args... args) {
  struct Scope {
    bool was = t_in_real_allocator;  // an allocator that calls malloc again
    Scope() {
      t_in_real_allocator = true;
      std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    ~Scope() {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      t_in_real_allocator = was;
    }
  } scope;
  return fn(args...);
}

// Set while a walk runs in a signal handler (fast_backtrace_from_signal):
// the signal may have interrupted the C library's malloc, which libdw
// would call. Such a walk takes only cached rules.
extern constinit thread_local bool t_no_rule_building;

// Whether a capture here may build a rule (libdw allocates): not inside
// the C library's malloc, nor in a signal handler's walk, nor, with a
// program's own allocator, before it returned.
bool may_build_rule();

// Rules built by this thread (for FastUnwindCounters).
uint64_t rules_built_here();
// Rules this thread found (in an older level or the store) and, in a
// fork child's first misses, did not copy into its cache.
uint64_t rules_not_kept_here();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_RULE_CACHE_H
