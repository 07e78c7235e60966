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
inline constexpr uint32_t kSharedRulesVersion = 1;
// 2^17 slots (4 MiB): a shell loop's processes need ~600 rules in all, a
// Python run with its extension modules a few thousand; the room is for
// spreading them (shared_rule_store.cpp keeps a module's rules by its
// code's pages). Memory is taken only where slots are written.
inline constexpr uint32_t kSharedRuleSlotsLog2 = 17;

struct SharedRulesHeader {
  uint32_t magic;
  uint32_t version;
  uint64_t slot_count;  // a power of two
  uint8_t unused[48];
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
