// The shared rule cache: open addressing over slots of {key, rule}. key =
// address | generation << 47 (user-space x86-64 addresses are below
// 2^47), 0 when free; a key of an older generation is stale: lookups skip
// it, inserts reuse it. One writer at a time (g_build_lock); readers check
// the key again after reading the rule (a seqlock whose sequence is the
// key), so a slot being rewritten reads as a miss, never as a rule of
// another address.
//
// It starts small and grows (table_levels.h): levels of 2^8 to 2^16 slots
// (4 KiB to 1 MiB) in one mapping, touched as used, so a short process's
// few hundred rules fill a few pages rather than one page each.
// Rules go to the newest level; the writer makes the next one the newest
// when it is half full. A rule that misses in the newest level is looked
// for in the older ones (without the lock) and copied into the newest
// when the lock is free, instead of being built again.
#include "rule_cache.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include <bit>

#include "fast_unwind.h"
#include "table_levels.h"
#include "unwind_rule.h"

namespace spoor::preload {

std::atomic<uint64_t> g_unwind_epoch{0};
std::atomic<bool> g_rule_cache_ready{false};
constinit thread_local bool t_after_allocator_returned __attribute__((tls_model("initial-exec"))) = false;
constinit thread_local bool t_in_real_allocator __attribute__((tls_model("initial-exec"))) = false;
constinit thread_local bool t_no_rule_building __attribute__((tls_model("initial-exec"))) = false;

namespace {

struct RuleSlot {
  std::atomic<uint64_t> key;
  std::atomic<uint64_t> rule;  // an UnwindRule's bytes
};
static_assert(sizeof(RuleSlot) == 16);
using Levels = TableLevels<8, 5>;  // 2^8 .. 2^16 slots; 1.3 MiB of address space
constexpr int kProbes = 8;
constexpr int kAddressBits = 47;
constexpr uint64_t kGenerationMask = (uint64_t{1} << (64 - kAddressBits)) - 1;
constexpr int kGenerationShift = 16;

RuleSlot* g_rules = nullptr;  // the mapping: every level
// The newest level (Levels::pack), 0 until init_rule_cache. Written under
// g_build_lock; a reader that still sees the one before finds its rules
// there or in the older levels, so its loads need no ordering but the
// first one's (the mapping, published with g_rule_cache_ready).
std::atomic<uintptr_t> g_newest{0};
uint64_t g_inserted_in_newest = 0;  // under g_build_lock

// Taken with trylock on a miss (a thread that would wait falls back
// instead, so no thread ever blocks on it from a hook), and across fork so
// the child gets libdw's and the module table's state whole.
pthread_mutex_t g_build_lock = PTHREAD_MUTEX_INITIALIZER;

constinit thread_local uint64_t t_rules_built __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local uint64_t t_rules_not_kept __attribute__((tls_model("initial-exec"))) = 0;
// Set at attach when the program's malloc is not glibc's (rule_cache.h).
std::atomic<bool> g_allocator_foreign{false};

RuleSlot* level_slots(int level) { return g_rules + Levels::first_slot(level); }

uint64_t slot_of(uint64_t address, int level) {
  return (address * 0x9E3779B97F4A7C15ull) >> (64 - Levels::bits(level));
}

uint64_t key_of(uint64_t address, uint64_t epoch) {
  return address | (((epoch >> kGenerationShift) & kGenerationMask) << kAddressBits);
}

uint64_t find_rule(RuleSlot* rules, int level, uint64_t key, uint64_t address) {
  const uint64_t mask = Levels::slots(level) - 1;
  uint64_t i = slot_of(address, level);
  for (int probe = 0; probe < kProbes; ++probe, i = (i + 1) & mask) {
    RuleSlot& s = rules[i];
    const uint64_t seen = s.key.load(std::memory_order_acquire);
    if (seen == key) {
      const uint64_t rule = s.rule.load(std::memory_order_relaxed);
      // The rule read above was written before `key` was published and
      // after any earlier clearing of it: still `key` means it is the
      // rule of `key`.
      std::atomic_thread_fence(std::memory_order_acquire);
      return s.key.load(std::memory_order_relaxed) == key ? rule : 0;
    }
    if (seen == 0) return 0;
  }
  return 0;
}

// The rule of `key` in a level older than `newest`, newest first; 0 when
// none has it.
uint64_t find_rule_in_older_levels(int newest, uint64_t key, uint64_t address) {
  for (int level = newest - 1; level >= 0; --level) {
    const uint64_t rule = find_rule(level_slots(level), level, key, address);
    if (rule != 0) return rule;
  }
  return 0;
}

void grow_past(int level) {
  g_inserted_in_newest = 0;
  g_newest.store(Levels::pack(level_slots(level + 1), level + 1), std::memory_order_relaxed);
}

// Under g_build_lock, into the newest level. Takes a free or stale slot in
// the probe window; with none, grows (the next level has room), or in the
// last level evicts the first one. The insert that fills half the newest
// level grows the table too.
void insert_rule(uint64_t key, uint64_t address, uint64_t rule) {
  const uint64_t generation_bits = key >> kAddressBits;
  for (;;) {
    const uintptr_t newest = g_newest.load(std::memory_order_relaxed);
    const int level = Levels::level_of(newest);
    RuleSlot* const rules = Levels::base_of<RuleSlot>(newest);
    const uint64_t mask = Levels::slots(level) - 1;
    uint64_t i = slot_of(address, level);
    uint64_t victim = i;
    bool room = false;
    for (int probe = 0; probe < kProbes; ++probe, i = (i + 1) & mask) {
      const uint64_t seen = rules[i].key.load(std::memory_order_relaxed);
      if (seen == 0 || (seen >> kAddressBits) != generation_bits) {
        victim = i;
        room = true;
        break;
      }
    }
    const bool last = level + 1 >= Levels::kLevels;
    if (!room && !last) {
      grow_past(level);
      continue;
    }
    RuleSlot& s = rules[victim];
    s.key.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);  // readers see the slot cleared before its new rule
    s.rule.store(rule, std::memory_order_relaxed);
    s.key.store(key, std::memory_order_release);
    if (++g_inserted_in_newest == Levels::slots(level) / 2 && !last) grow_past(level);
    return;
  }
}

// A fork child's cache is its parent's pages, copy-on-write: each insert
// into the newest level (64 KiB and more in a shell that ran a while)
// copied a page, ~14 us here, and a short child inserted ~25 rules from
// the store, ~13 pages. Its first kChildMissesNotKept rules that another
// level or the store has are used, not inserted: a child that ends soon
// writes none; one that lives on keeps every rule from its next misses on,
// having looked up at most that many twice. (Built rules are always kept:
// building one costs far more than the page.) Under g_build_lock.
constexpr uint32_t kChildMissesNotKept = 64;
uint32_t g_child_misses_not_kept = 0;

bool keep_found_rule() {
  if (g_child_misses_not_kept == 0) return true;
  --g_child_misses_not_kept;
  ++t_rules_not_kept;
  return false;
}

// The slow path, for a rule the newest level does not have: from an older
// level (copied into the newest when the lock is free), else built with
// libdw and cached.
// Another thread is building a rule: wait for it, a while. A capture
// that may build a rule may wait for the lock as well (the builder needs
// nothing this thread holds: the heap hooks capture after the allocator
// returned, and a builder's own hooks and signals capture nothing). Not
// waiting sent the capture to libunwind, which cannot leave a cgo call's C
// frames: under load, a builder preempted for a scheduler slice cost a
// goroutine every stack it captured meanwhile (300 of 300, in 3 of 30 runs
// of a test). Bounded, so that a builder stopped for longer (a debugger)
// costs only the stacks' Go frames.
bool wait_for_builder() {
  constexpr long kWaitNs = 50'000'000;
  timespec until{};
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += kWaitNs;
  if (until.tv_nsec >= 1'000'000'000) {
    until.tv_nsec -= 1'000'000'000;
    ++until.tv_sec;
  }
  return pthread_mutex_clocklock(&g_build_lock, CLOCK_MONOTONIC, &until) == 0;
}

__attribute__((noinline)) uint64_t rule_beyond_newest(uintptr_t newest, uint64_t address, uint64_t epoch) {
  const uint64_t key = key_of(address, epoch);
  const uint64_t older = find_rule_in_older_levels(Levels::level_of(newest), key, address);
  // A capture that may not build (or wait) asks the recording's store,
  // lock-free: another process, or this one's other threads, may have
  // built it. 0: this capture falls back.
  if (!may_build_rule() || (pthread_mutex_trylock(&g_build_lock) != 0 && !wait_for_builder()))
    return older != 0 ? older : rule_from_store_alone(address, epoch >> kGenerationShift);
  const uintptr_t newest_now = g_newest.load(std::memory_order_relaxed);
  uint64_t rule = find_rule(Levels::base_of<RuleSlot>(newest_now), Levels::level_of(newest_now), key, address);
  if (rule == 0 && older != 0) {
    rule = older;
    if (keep_found_rule()) insert_rule(key, address, rule);
  } else if (rule == 0) {
    // An unload we were not told of (the C library's own dlclose of NSS or
    // iconv modules does not go through the interposed dlclose), or a load
    // where a guess may be cached: everything cached may be stale. This
    // capture finishes on the old generation.
    if (modules_changed_since_last_check()) g_unwind_epoch.fetch_add(uint64_t{1} << kGenerationShift);
    const uint64_t from_store_before = rules_from_store_here();
    rule = std::bit_cast<uint64_t>(describe_unwind_rule(address, epoch >> kGenerationShift));
    // 0: libdw is not loaded yet (libdw_loader.h); nothing to keep.
    if (rule != 0) {
      if (rules_from_store_here() == from_store_before || keep_found_rule()) insert_rule(key, address, rule);
      ++t_rules_built;
    }
  }
  pthread_mutex_unlock(&g_build_lock);
  return rule;
}

void prepare_fork() { pthread_mutex_lock(&g_build_lock); }
void after_fork() { pthread_mutex_unlock(&g_build_lock); }
void after_fork_in_child() {
  g_child_misses_not_kept = kChildMissesNotKept;
  pthread_mutex_unlock(&g_build_lock);
}

}  // namespace

bool may_build_rule() {
  if (t_in_real_allocator || t_no_rule_building) return false;
  return !g_allocator_foreign.load(std::memory_order_relaxed) || t_after_allocator_returned;
}

bool init_rule_cache() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return rule_cache_ready();
  const size_t bytes = Levels::total_slots() * sizeof(RuleSlot);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  if (pthread_atfork(prepare_fork, after_fork, after_fork_in_child) != 0) {
    munmap(p, bytes);
    return false;
  }
  // Zero pages: every slot free. The first level's one page is written at
  // once (a read would map the zero page, and the first insert fault again).
  g_rules = static_cast<RuleSlot*>(p);
  level_slots(0)->rule.store(0, std::memory_order_relaxed);
  g_newest.store(Levels::pack(level_slots(0), 0), std::memory_order_relaxed);
  g_rule_cache_ready.store(true, std::memory_order_release);
  return true;
}

uint64_t cached_rule(uint64_t address, uint64_t epoch) {
  const uintptr_t newest = g_newest.load(std::memory_order_relaxed);
  if (newest == 0 || address >> kAddressBits) return 0;
  const uint64_t rule =
      find_rule(Levels::base_of<RuleSlot>(newest), Levels::level_of(newest), key_of(address, epoch), address);
  return rule != 0 ? rule : rule_beyond_newest(newest, address, epoch);
}

uint64_t rules_built_here() { return t_rules_built; }
uint64_t rules_not_kept_here() { return t_rules_not_kept; }

void note_program_allocator(bool glibc) { g_allocator_foreign.store(!glibc, std::memory_order_relaxed); }

void begin_module_unload() { g_unwind_epoch.fetch_add(1, std::memory_order_acq_rel); }

void end_module_unload() {
  // libunwind's caches of unwind info (not its per-thread trace caches,
  // which nothing empties) for the captures that fall back to it.
  unw_flush_cache(unw_local_addr_space, 0, 0);
  // One more generation, one fewer unload in progress, in one step.
  const uint64_t epoch =
      g_unwind_epoch.fetch_add((uint64_t{1} << kGenerationShift) - 1, std::memory_order_acq_rel) +
      (uint64_t{1} << kGenerationShift) - 1;
  // The generation's key bits wrapped: keys of 2^17 unloads ago would look
  // current again. Clear every slot (rare enough to wait for the lock).
  if (((epoch >> kGenerationShift) & kGenerationMask) == 0 && rule_cache_ready()) {
    pthread_mutex_lock(&g_build_lock);
    for (uint64_t i = 0; i < Levels::total_slots(); ++i) g_rules[i].key.store(0, std::memory_order_relaxed);
    pthread_mutex_unlock(&g_build_lock);
  }
}

}  // namespace spoor::preload
