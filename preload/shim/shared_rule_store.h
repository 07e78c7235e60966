// This process's view of the recording's shared store of unwind rules
// (../shared_rules.h): rules keyed by module build ID and offset, built
// by any traced process and read by all. The fast unwinder's own cache
// (rule_cache.h) stays first; this store is asked on its misses, before a
// rule is built with libdw, and given every rule built.
#ifndef SPOOR_PRELOAD_SHARED_RULE_STORE_H
#define SPOOR_PRELOAD_SHARED_RULE_STORE_H

#include <cstddef>
#include <cstdint>

namespace spoor::preload {

// Maps the store behind `fd` for the rest of the process's life (an exec
// drops it; a fork child keeps its parent's mapping) and closes `fd`.
// False, with no store attached, when it is not one or cannot be mapped.
// Call once per image, before rules are looked up.
bool attach_shared_rules(int fd);
// A store already laid out in this process's memory (tests).
bool attach_shared_rules_at(void* memory, size_t size);
bool shared_rules_attached();

// A module's key in the store, from its GNU build ID: a 64-bit hash of
// the ID's bytes and length, never 0 or 1. 0 for a module without one,
// whose rules are not shared.
uint64_t shared_rule_module_key(const uint8_t* build_id, uint32_t size);

// The rule published for `offset` (an address minus the module's load
// bias) in module `module`; 0 when none is, or no store is attached.
// Loads only: async-signal-safe, no lock. Cost: a hash and a short probe
// of one or two cache lines of shared memory (a page fault the first time
// this process reads that page of the store).
uint64_t find_shared_rule(uint64_t module, uint64_t offset);

// Publishes `rule` (never 0) for (module, offset). Lock-free across
// processes; gives up silently when the probe window is full.
void publish_shared_rule(uint64_t module, uint64_t offset, uint64_t rule);

// The rule an earlier recording kept for (module, offset), from the
// store's sorted kept rules (../shared_rules.h); 0 when none. Loads only:
// a binary search, ~15 steps for the most a store keeps.
uint64_t find_kept_rule(uint64_t module, uint64_t offset);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SHARED_RULE_STORE_H
