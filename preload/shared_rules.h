// The recording's store of unwind rules, shared by every traced process:
// one memfd (mode 0600) that `spoor record` creates and hands to each
// process beside its region (protocol.h). A rule depends only on the
// module's code, so it is keyed by the module's GNU build ID and the
// offset from the module's load bias: a rule built once with libdw in one
// process serves every other process that runs the same code, wherever it
// loaded it. A shell's subshells and the programs it runs otherwise build
// the same rules each time (45 a subshell, ~100 a `cat`), and a fork child
// builds them at ~40 us each, its libdw state being copy-on-write pages
// (bench/RESULTS.md).
//
//   slot: {module, offset, rule, unused}, 32 bytes, open addressing.
//   module: 0 free; 1 being written; else the module's key.
//
// After the slots, the rules kept from earlier recordings
// (record/rule_cache_file.h), when there are any: {module, offset, rule}
// entries sorted by module and offset, written by spoor record before any
// process attaches and only read after. Dense where the slots are spread
// (a bucket per code page), so putting thousands of them in costs a few
// dozen fresh pages, not hundreds; a process that misses the slots looks
// there before building a rule, and publishes what it finds.
//
// Insert-only: a published slot never changes, so no generation is
// needed (a build ID names its code for good). Writers in different
// processes claim a free slot with a compare-and-swap of `module` from 0
// to 1, write `offset` and `rule`, then publish the key with release;
// readers load `module` with acquire and then read the other two. A
// process killed between the claim and the publish leaves a slot at 1:
// one slot lost, skipped by readers. Two processes publishing the same
// rule at once may both insert it: the same value twice, harmless.
#ifndef SPOOR_PRELOAD_SHARED_RULES_H
#define SPOOR_PRELOAD_SHARED_RULES_H

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace spoor::preload {

inline constexpr uint32_t kSharedRulesMagic = 0x534C5552u;  // "RULS"
inline constexpr uint32_t kSharedRulesVersion = 2;
// 2^17 slots (4 MiB): a shell loop's processes need ~600 rules in all, a
// Python run with its extension modules a few thousand; the room is for
// spreading them (shared_rule_store.cpp keeps a module's rules by its
// code's pages). Memory is taken only where slots are written.
inline constexpr uint32_t kSharedRuleSlotsLog2 = 17;

struct SharedRulesHeader {
  uint32_t magic;
  uint32_t version;
  uint64_t slot_count;   // a power of two
  uint64_t kept_offset;  // bytes from the header to the kept rules; 0: none
  uint64_t kept_count;   // KeptRule entries there
  uint8_t unused[32];
};
static_assert(sizeof(SharedRulesHeader) == 64);

struct SharedRuleSlot {
  std::atomic<uint64_t> module;
  std::atomic<uint64_t> offset;
  std::atomic<uint64_t> rule;  // an UnwindRule's bytes; never 0
  uint64_t unused;
};
static_assert(sizeof(SharedRuleSlot) == 32);

inline constexpr uint64_t kSharedRuleFree = 0;
inline constexpr uint64_t kSharedRuleClaimed = 1;

// What an UnwindRule's 8 bytes mean (unwind_rule.h): rules kept from one
// recording to the next (rule_cache_file.h) carry it, and a cache of
// another format is not read. Bump it with any change to UnwindRule.
inline constexpr uint32_t kUnwindRuleFormat = 1;

// A module's rules lie close together: each 4 KiB page of its code has a
// bucket of 64 slots (2 KiB, half a page of the store) from a place the
// module's key picks, the next code page the next bucket, and a rule
// takes a slot in its bucket by a hash of its offset. The rules a process
// needs from a hot part of a module then share a few pages of the store,
// rather than one page each (each page of the store is a page fault in
// every process that reads it), and a page of code with many call sites
// spills into its neighbour's bucket without pushing every later rule
// along. A probe covers two buckets; slot indexes wrap at the store's size.
inline constexpr int kSharedRuleCodePageLog2 = 12;
inline constexpr int kSharedRuleBucketLog2 = 6;
inline constexpr int kSharedRuleProbes = 2 << kSharedRuleBucketLog2;

inline uint64_t shared_rule_first_slot(uint64_t module, uint64_t offset) {
  const uint64_t bucket = (module * 0x9E3779B97F4A7C15ull >> 20) + (offset >> kSharedRuleCodePageLog2);
  const uint64_t in_bucket = (offset * 0xFF51AFD7ED558CCDull) >> (64 - kSharedRuleBucketLog2);
  return (bucket << kSharedRuleBucketLog2) + in_bucket;
}

// A rule kept from an earlier recording, as the rule cache file holds it.
struct KeptRule {
  uint64_t module, offset, rule;
};
static_assert(sizeof(KeptRule) == 24);

// The order kept rules are written in (record/rule_cache_file.cpp) and
// searched in (shim/shared_rule_store.cpp): by module, then offset.
inline bool kept_rule_before(const KeptRule& a, const KeptRule& b) {
  return a.module != b.module ? a.module < b.module : a.offset < b.offset;
}

inline constexpr size_t shared_rules_bytes() {
  return sizeof(SharedRulesHeader) + (size_t{1} << kSharedRuleSlotsLog2) * sizeof(SharedRuleSlot);
}

// Lays out a zeroed store of shared_rules_bytes() (every slot free).
inline void init_shared_rules(void* memory) {
  auto* header = static_cast<SharedRulesHeader*>(memory);
  header->magic = kSharedRulesMagic;
  header->version = kSharedRulesVersion;
  header->slot_count = uint64_t{1} << kSharedRuleSlotsLog2;
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SHARED_RULES_H
