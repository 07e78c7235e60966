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
// and cached (microseconds; allocates). 0 (kNone) when another thread is
// building one: this capture falls back to libunwind.
uint64_t cached_rule(uint64_t address, uint64_t epoch);

// Rules built by this thread (for FastUnwindCounters).
uint64_t rules_built_here();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_RULE_CACHE_H
