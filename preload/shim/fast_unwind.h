// The stack walker behind current_stack_id: unw_backtrace's frames at a
// fraction of its cost. On x86-64 it keeps, per return address, the unwind
// rule the module's .eh_frame gives there (read with libdw on a miss) when
// it is the common kind: CFA = rsp or rbp + N, the return address and the
// caller's rbp at fixed offsets below the CFA. Each thread remembers its
// recent walks, and a walk that goes where one of them went takes its
// rules from it without waiting on each return address. A frame of any
// other kind (signal frames, DWARF expressions, rules that need other
// registers, code without unwind tables) hands the whole capture to
// libunwind, as do other architectures.
#ifndef SPOOR_PRELOAD_FAST_UNWIND_H
#define SPOOR_PRELOAD_FAST_UNWIND_H

#include <cstdint>

namespace spoor::preload {

// Maps the rule cache, registers the fork handlers and the key that frees
// a thread's recent walks when it exits, and primes the calling thread's
// stack bounds (prime_thread_stack). Until it has run (or when it
// fails: false), fast_backtrace is unw_backtrace. Call it before the first
// capture; later calls return the first one's result. `libdw_loaded`
// runs when libdw is loaded, later (libdw_loader.h).
bool init_fast_unwind(void (*libdw_loaded)() = nullptr);

// In pthread_create, before the program's first other thread starts:
// the rules' reader, libdw, is loaded while the process is single-threaded
// (libdw_loader.h), since no capture may load it once threads run.
void prepare_unwinder_for_threads();

// unw_backtrace's walk with libunwind's cursor: the same frames (the
// return addresses from the caller of this function on), at ~2 us a frame
// here, without the 256 KiB cache unw_backtrace makes at a thread's first
// call (~0.85 ms): for a thread's first few walks.
int cursor_backtrace(void** frames, int max);

// Finds the calling thread's stack bounds, which the walk stays within.
// Call where the program holds no lock of its own: init_fast_unwind does
// it for the attaching (main) thread, the thread trampoline first thing
// in each new thread; a thread never primed is unwound by libunwind. Not
// from a capture: pthread_getattr_np takes the thread's lock and
// allocates while holding it, so a capture inside the program's own
// pthread_getattr_np (Rust's runtime calls it at start, and in every
// thread it spawns) would wait on that lock forever.
void prime_thread_stack();

// Like unw_backtrace: fills frames[0..max) with the return addresses of
// the calling thread's stack, innermost first, frames[0] being the one
// into fast_backtrace's caller, and returns how many it stored (at most
// max, which is at most kFastUnwindMaxFrames).
//
// Cost (x86-64, rules cached; bench/unwind_bench.cpp): ~1.7-2.3 ns per
// frame when the stack repeats a recent walk of the thread's, 2-3 ns when
// consecutive stacks differ, against unw_backtrace's ~6-7 ns. A rule not
// cached yet is built with libdw (microseconds, once per return address
// for the whole process; it allocates, so callers in allocator hooks hold
// their reentry guard). Each thread's first capture maps two pages for
// its walks.
// Never faults: stack reads stay between the capture's stack pointer and
// the top of the thread's stack; a capture whose walk leaves it, or finds
// a frame it does not handle, is done by libunwind instead.
//
// memo, when not null, receives a word the caller may keep something in
// about this stack (current_stack_id keeps its ID): it holds what the
// caller stored after an earlier capture of the same frames with the same
// max, or 0; it stays valid until the next capture on this thread. Null
// when there is none (libunwind did the capture, or it interrupted
// another one).
int fast_backtrace(void** frames, int max, uint64_t** memo = nullptr);
inline constexpr int kFastUnwindMaxFrames = 256;

// For a CPU sample: the interrupted thread's stack from the signal handler's
// `ucontext` (a ucontext_t*), as unw_backtrace lists it past the signal
// frame: frames[0] the interrupted instruction's own address, then the
// return addresses. The cached rules take the walk from the interrupted
// instruction (the rule at its exact PC); where that rule is not cached,
// libunwind steps out of the interrupted frame and the rules go on from
// its caller; where one is missing further on, libunwind takes the rest
// from where it was. It builds no rule (the signal may have interrupted
// malloc, which libdw would call). Returns how many frames it stored (at
// most max, at most kFastUnwindMaxFrames; at least the interrupted
// instruction), or -1 on another architecture: use unw_backtrace. Off the
// thread's known stack (a thread never primed, an alternate signal stack)
// libunwind's cursor walks it all. Never unw_backtrace, whose per-thread
// cache would be made in the handler. Async-signal-safe. Cost: ~50 ns
// besides the kernel's delivery with the rules cached, ~2 us more where
// libunwind steps (spoor_bench_unwind's _Sample cases). The addresses whose
// rules were missing are kept (a few per thread) for build_missed_rules();
// *missed says whether any was.
int fast_backtrace_from_signal(const void* ucontext, void** frames, int max, bool* missed);

// Builds the rules the thread's signal walks missed (libdw: it allocates),
// so its later samples find them. Call where a capture may build rules:
// in the shim, outside any signal handler.
void build_missed_rules();

// Forgets every cached rule (and flushes libunwind's caches) around a
// module's unloading: its addresses may hold other code later. Call begin
// before dlclose and end after; in between, captures go to libunwind.
void begin_module_unload();
void end_module_unload();

// What this thread's captures did, for tests and benchmarks.
struct FastUnwindCounters {
  uint64_t fast = 0;         // captures done by the cached rules alone
  uint64_t fallback = 0;     // captures handed to libunwind
  uint64_t rules_built = 0;  // misses that built a rule (usable or not)
  uint64_t rules_from_store = 0;  // ... of which the recording's shared store had (shared_rule_store.h)
  uint64_t rules_not_kept = 0;    // rules found and not copied into a fork child's cache (rule_cache.cpp)
  uint64_t signal_fast = 0;      // fast_backtrace_from_signal walks the rules finished
  uint64_t signal_libunwind = 0;  // ... that libunwind finished
};
FastUnwindCounters fast_unwind_counters();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_FAST_UNWIND_H
