#include "shared_rule_store.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "../shared_rules.h"

namespace spoor::preload {
namespace {

// Published with release after the header was checked; read on every
// lookup (a miss of the unwinder's own cache).
std::atomic<SharedRuleSlot*> g_slots{nullptr};
uint64_t g_mask = 0;  // slot_count - 1, written before g_slots
// The kept rules, sorted (written before g_slots, read after it).
const KeptRule* g_kept = nullptr;
uint64_t g_kept_count = 0;

}  // namespace

bool attach_shared_rules_at(void* memory, size_t size) {
  auto* header = static_cast<SharedRulesHeader*>(memory);
  if (size < sizeof(SharedRulesHeader) || header->magic != kSharedRulesMagic ||
      header->version != kSharedRulesVersion || header->slot_count == 0 ||
      (header->slot_count & (header->slot_count - 1)) != 0 ||
      header->slot_count > (size - sizeof(SharedRulesHeader)) / sizeof(SharedRuleSlot))
    return false;
  g_mask = header->slot_count - 1;
  const uint64_t slots_end = header->slot_count * sizeof(SharedRuleSlot);
  const uint64_t room = size - sizeof(SharedRulesHeader);
  if (header->kept_count != 0 && header->kept_offset >= slots_end && header->kept_offset % 8 == 0 &&
      header->kept_offset <= room && header->kept_count <= (room - header->kept_offset) / sizeof(KeptRule)) {
    g_kept = reinterpret_cast<const KeptRule*>(reinterpret_cast<const uint8_t*>(header + 1) + header->kept_offset);
    g_kept_count = header->kept_count;
  }
  g_slots.store(reinterpret_cast<SharedRuleSlot*>(header + 1), std::memory_order_release);
  return true;
}

bool attach_shared_rules(int fd) {
  struct stat st;
  void* base = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(sizeof(SharedRulesHeader)))
    base = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return false;
  if (attach_shared_rules_at(base, static_cast<size_t>(st.st_size))) return true;
  munmap(base, static_cast<size_t>(st.st_size));
  return false;
}

bool shared_rules_attached() { return g_slots.load(std::memory_order_acquire) != nullptr; }

uint64_t shared_rule_module_key(const uint8_t* build_id, uint32_t size) {
  if (build_id == nullptr || size == 0) return 0;
  uint64_t h = 0xCBF29CE484222325ull ^ size;  // FNV-1a, seeded with the length
  for (uint32_t i = 0; i < size; ++i) h = (h ^ build_id[i]) * 0x100000001B3ull;
  h ^= h >> 29;  // the low bits, which pick no slot otherwise, depend on every byte
  return h > kSharedRuleClaimed ? h : h + 2;
}

uint64_t find_shared_rule(uint64_t module, uint64_t offset) {
  SharedRuleSlot* const slots = g_slots.load(std::memory_order_acquire);
  if (slots == nullptr || module <= kSharedRuleClaimed) return 0;
  uint64_t i = shared_rule_first_slot(module, offset);
  for (int probe = 0; probe < kSharedRuleProbes; ++probe, ++i) {
    SharedRuleSlot& s = slots[i & g_mask];
    // Acquire: the publisher wrote offset and rule before the key.
    const uint64_t seen = s.module.load(std::memory_order_acquire);
    if (seen == kSharedRuleFree) return 0;  // slots fill in probe order: no match further on
    if (seen == module && s.offset.load(std::memory_order_relaxed) == offset)
      return s.rule.load(std::memory_order_relaxed);
  }
  return 0;
}

void publish_shared_rule(uint64_t module, uint64_t offset, uint64_t rule) {
  SharedRuleSlot* const slots = g_slots.load(std::memory_order_acquire);
  if (slots == nullptr || module <= kSharedRuleClaimed || rule == 0) return;
  uint64_t i = shared_rule_first_slot(module, offset);
  for (int probe = 0; probe < kSharedRuleProbes; ++probe, ++i) {
    SharedRuleSlot& s = slots[i & g_mask];
    uint64_t seen = s.module.load(std::memory_order_acquire);
    if (seen == kSharedRuleFree &&
        s.module.compare_exchange_strong(seen, kSharedRuleClaimed, std::memory_order_acquire,
                                         std::memory_order_acquire)) {
      s.offset.store(offset, std::memory_order_relaxed);
      s.rule.store(rule, std::memory_order_relaxed);
      // Release: a reader that sees the key sees the offset and rule.
      s.module.store(module, std::memory_order_release);
      return;
    }
    // Taken (or lost the race for it): already this rule, or go on.
    if (seen == module && s.offset.load(std::memory_order_relaxed) == offset) return;
  }
}

uint64_t find_kept_rule(uint64_t module, uint64_t offset) {
  if (g_slots.load(std::memory_order_acquire) == nullptr || g_kept == nullptr) return 0;
  const KeptRule* const end = g_kept + g_kept_count;
  const KeptRule* const at = std::lower_bound(g_kept, end, KeptRule{module, offset, 0}, kept_rule_before);
  return at != end && at->module == module && at->offset == offset ? at->rule : 0;
}

}  // namespace spoor::preload
