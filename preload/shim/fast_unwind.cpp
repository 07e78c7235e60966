// The fast unwinder: a rule cache shared by all threads, read without
// locks, filled by one thread at a time on a miss, emptied by bumping a
// generation when modules are unloaded. See fast_unwind.h.
#include "fast_unwind.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include "unwind_rule.h"
#endif

namespace spoor::preload {
namespace {

constinit thread_local FastUnwindCounters t_counters __attribute__((tls_model("initial-exec")));

// unw_backtrace, minus this function's and fast_backtrace's own frames.
__attribute__((noinline)) int libunwind_backtrace(void** frames, int max) {
  void* all[kFastUnwindMaxFrames + 2];
  int n = unw_backtrace(all, max + 2);
  n = n > 2 ? n - 2 : 0;
  std::memcpy(frames, all + 2, static_cast<size_t>(n) * sizeof(void*));
  ++t_counters.fallback;
  return n;
}

// Hands the capture to libunwind. Never as a tail call: libunwind_backtrace
// drops fast_backtrace's frame, which must still be there.
#define SPOOR_FALL_BACK()                              \
  do {                                                 \
    const int fallback_n = libunwind_backtrace(frames, max); \
    __asm__ volatile("" ::: "memory");                 \
    return fallback_n;                                 \
  } while (0)

#if defined(__x86_64__)

// --- the rule cache --------------------------------------------------------
// Open addressing, 2^16 slots of {key, rule}. key = address | generation
// << 47 (user-space x86-64 addresses are below 2^47), 0 when free; a key of
// an older generation is stale: lookups skip it, inserts reuse it. One
// writer at a time (g_build_lock); readers check the key again after
// reading the rule (a seqlock whose sequence is the key), so a slot being
// rewritten is a miss, never a rule of another address.
struct RuleSlot {
  std::atomic<uint64_t> key;
  std::atomic<uint64_t> rule;
};
constexpr int kRuleSlotBits = 16;
constexpr uint64_t kRuleSlots = uint64_t{1} << kRuleSlotBits;  // 1 MiB of address space
constexpr int kProbes = 8;
constexpr int kAddressBits = 47;
constexpr uint64_t kGenerationMask = (uint64_t{1} << (64 - kAddressBits)) - 1;

std::atomic<RuleSlot*> g_rules{nullptr};

// Bits 0..15: module unloads in progress (captures then go to libunwind);
// bits 16 and up: the generation, bumped when an unload ends.
constexpr uint64_t kUnloadsMask = 0xFFFF;
constexpr int kGenerationShift = 16;
std::atomic<uint64_t> g_epoch{0};

// Taken with trylock on a miss (a thread that would wait falls back
// instead, so no thread ever blocks on it from a hook), and across fork so
// the child gets libdw's and the module table's state whole.
pthread_mutex_t g_build_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t slot_of(uint64_t address) { return (address * 0x9E3779B97F4A7C15ull) >> (64 - kRuleSlotBits); }

uint64_t key_of(uint64_t address, uint64_t epoch) {
  return address | (((epoch >> kGenerationShift) & kGenerationMask) << kAddressBits);
}

// Cost: one multiply and, usually, one slot's two loads (x86: plain movs).
inline bool find_rule(RuleSlot* rules, uint64_t key, uint64_t address, uint64_t* rule) {
  uint64_t i = slot_of(address);
  for (int probe = 0; probe < kProbes; ++probe, i = (i + 1) & (kRuleSlots - 1)) {
    RuleSlot& s = rules[i];
    const uint64_t seen = s.key.load(std::memory_order_acquire);
    if (seen == key) {
      const uint64_t r = s.rule.load(std::memory_order_relaxed);
      // The rule read above was written before `key` was published and
      // after any earlier clearing of it: still `key` means it is the
      // rule of `key`.
      std::atomic_thread_fence(std::memory_order_acquire);
      if (s.key.load(std::memory_order_relaxed) != key) return false;
      *rule = r;
      return true;
    }
    if (seen == 0) return false;
  }
  return false;
}

// Under g_build_lock. Takes a free or stale slot in the probe window, else
// evicts the first one.
void insert_rule(RuleSlot* rules, uint64_t key, uint64_t address, uint64_t rule, uint64_t current_generation_bits) {
  uint64_t i = slot_of(address);
  uint64_t victim = i;
  for (int probe = 0; probe < kProbes; ++probe, i = (i + 1) & (kRuleSlots - 1)) {
    const uint64_t seen = rules[i].key.load(std::memory_order_relaxed);
    if (seen == 0 || (seen >> kAddressBits) != current_generation_bits) {
      victim = i;
      break;
    }
  }
  RuleSlot& s = rules[victim];
  s.key.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // readers see the slot cleared before its new rule
  s.rule.store(rule, std::memory_order_relaxed);
  s.key.store(key, std::memory_order_release);
}

// The slow path: builds the rule at `address` with libdw and caches it.
// False when another thread is building (this capture falls back).
__attribute__((noinline)) bool build_rule(RuleSlot* rules, uint64_t address, uint64_t epoch, uint64_t* rule) {
  if (pthread_mutex_trylock(&g_build_lock) != 0) return false;
  // An unload we were not told of (the C library's own dlclose of NSS or
  // iconv modules does not go through the interposed dlclose): everything
  // cached may be stale. This capture finishes on the old generation.
  if (modules_unloaded_since_last_check()) g_epoch.fetch_add(uint64_t{1} << kGenerationShift);
  const uint64_t key = key_of(address, epoch);
  if (!find_rule(rules, key, address, rule)) {
    const UnwindRule r = describe_unwind_rule(address, epoch >> kGenerationShift);
    *rule = std::bit_cast<uint64_t>(r);
    insert_rule(rules, key, address, *rule, key >> kAddressBits);
    ++t_counters.rules_built;
  }
  pthread_mutex_unlock(&g_build_lock);
  return true;
}

// The calling thread's stack: captures read only between their own stack
// pointer and `top`. A thread whose stack pointer is outside [bottom, top)
// (a signal handler on an alternate stack, a coroutine) falls back.
struct ThreadStack {
  uintptr_t bottom, top;  // top 0: not looked up yet
};
constinit thread_local ThreadStack t_stack __attribute__((tls_model("initial-exec"))) = {0, 0};

// Once per thread. For the main thread glibc reads /proc/self/maps here
// (allocating: callers in hooks hold their reentry guard).
__attribute__((noinline)) void look_up_thread_stack(ThreadStack* s) {
  pthread_attr_t attr;
  void* base = nullptr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &base, &size) != 0) size = 0;
    pthread_attr_destroy(&attr);
  }
  if (size == 0) {
    *s = {1, 1};  // unknown: an empty range, every capture falls back
    return;
  }
  s->bottom = reinterpret_cast<uintptr_t>(base);
  s->top = s->bottom + size;
}

using StackWord = uintptr_t __attribute__((may_alias));

void prepare_fork() { pthread_mutex_lock(&g_build_lock); }
void after_fork() { pthread_mutex_unlock(&g_build_lock); }

#endif  // __x86_64__

}  // namespace

#if defined(__x86_64__)

bool init_fast_unwind() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return g_rules.load(std::memory_order_acquire) != nullptr;
  void* p = mmap(nullptr, kRuleSlots * sizeof(RuleSlot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  if (pthread_atfork(prepare_fork, after_fork, after_fork) != 0) {
    munmap(p, kRuleSlots * sizeof(RuleSlot));
    return false;
  }
  // Zero pages: every slot free.
  g_rules.store(static_cast<RuleSlot*>(p), std::memory_order_release);
  return true;
}

// The walk: per frame, one cached rule, a bounds check and one or two loads
// from the stack. Reading other frames' slots is what it is for, so
// AddressSanitizer does not instrument it.
__attribute__((noinline, no_sanitize("address"))) int fast_backtrace(void** frames, int max) {
  if (max > kFastUnwindMaxFrames) max = kFastUnwindMaxFrames;
  if (max <= 0) return 0;
  const uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  RuleSlot* const rules = g_rules.load(std::memory_order_acquire);
  if (rules == nullptr || (epoch & kUnloadsMask) != 0) SPOOR_FALL_BACK();

  // This frame's state: its PC (the lea's own address), stack and frame
  // pointers. The asm does not move rsp, so the CFI row at `pc` holds.
  uintptr_t pc, sp, fp;
  __asm__ volatile(
      "lea 0(%%rip), %0\n\t"
      "mov %%rsp, %1\n\t"
      "mov %%rbp, %2"
      : "=r"(pc), "=r"(sp), "=r"(fp));
  ThreadStack& stack = t_stack;
  if (stack.top == 0) look_up_thread_stack(&stack);
  if (sp < stack.bottom || sp >= stack.top) SPOOR_FALL_BACK();
  const uintptr_t top = stack.top;

  uintptr_t address = pc;  // where this frame's rule is looked up
  int n = 0;
  while (n < max) {
    uint64_t packed;
    if (!find_rule(rules, key_of(address, epoch), address, &packed) && !build_rule(rules, address, epoch, &packed))
      SPOOR_FALL_BACK();
    const auto rule = std::bit_cast<UnwindRule>(packed);
    if (rule.kind != UnwindRule::kStandard) {
      if (rule.kind == UnwindRule::kOutermost) break;
      SPOOR_FALL_BACK();
    }
    // The CFA must lie above this frame's stack pointer and within the
    // stack; the saved slots are below the CFA, so they must lie at or
    // above the stack pointer. CFAs grow strictly: the walk ends.
    const uintptr_t cfa = (rule.cfa_from_rbp ? fp : sp) + static_cast<intptr_t>(rule.cfa_offset);
    if (cfa <= sp || cfa > top) SPOOR_FALL_BACK();
    const uintptr_t ra_at = cfa + static_cast<intptr_t>(rule.ra_word) * 8;
    if (ra_at < sp) SPOOR_FALL_BACK();
    const uintptr_t ra = *reinterpret_cast<const StackWord*>(ra_at);
    if (rule.rbp_word != 0) {
      const uintptr_t rbp_at = cfa + static_cast<intptr_t>(rule.rbp_word) * 8;
      if (rbp_at < sp) SPOOR_FALL_BACK();
      fp = *reinterpret_cast<const StackWord*>(rbp_at);
    }
    if (ra < 0x4000) break;  // libunwind ends a stack here too
    if (ra >> kAddressBits) SPOOR_FALL_BACK();
    frames[n++] = reinterpret_cast<void*>(ra);
    sp = cfa;
    address = ra - 1;  // the call instruction: its rule, not the next one's
  }
  ++t_counters.fast;
  return n;
}

void begin_module_unload() { g_epoch.fetch_add(1, std::memory_order_acq_rel); }

void end_module_unload() {
  // libunwind's caches of unwind info (not its per-thread trace caches,
  // which nothing empties) for the captures that fall back to it.
  unw_flush_cache(unw_local_addr_space, 0, 0);
  // One more generation, one fewer unload in progress, in one step.
  const uint64_t epoch =
      g_epoch.fetch_add((uint64_t{1} << kGenerationShift) - 1, std::memory_order_acq_rel) +
      (uint64_t{1} << kGenerationShift) - 1;
  // The generation's key bits wrapped: keys of 2^17 unloads ago would look
  // current again. Clear every slot (rare enough to wait for the lock).
  RuleSlot* const rules = g_rules.load(std::memory_order_acquire);
  if (((epoch >> kGenerationShift) & kGenerationMask) == 0 && rules != nullptr) {
    pthread_mutex_lock(&g_build_lock);
    for (uint64_t i = 0; i < kRuleSlots; ++i) rules[i].key.store(0, std::memory_order_relaxed);
    pthread_mutex_unlock(&g_build_lock);
  }
}

#else  // other architectures: libunwind

bool init_fast_unwind() { return false; }
__attribute__((noinline)) int fast_backtrace(void** frames, int max) {
  if (max > kFastUnwindMaxFrames) max = kFastUnwindMaxFrames;
  if (max <= 0) return 0;
  SPOOR_FALL_BACK();
}
void begin_module_unload() {}
void end_module_unload() { unw_flush_cache(unw_local_addr_space, 0, 0); }

#endif

FastUnwindCounters fast_unwind_counters() { return t_counters; }

}  // namespace spoor::preload
