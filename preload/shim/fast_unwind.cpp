// The fast unwinder's walk: rules from the shared cache (rule_cache.h),
// predicted from the thread's recent walks, applied to the thread's stack
// within its bounds. See fast_unwind.h.
#include "fast_unwind.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <ucontext.h>
#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstring>

#include "loader_lock.h"
#include "rule_cache.h"
#if defined(__x86_64__)
#include "libdw_loader.h"
#include "unwind_rule.h"
#endif

namespace spoor::preload {

#if defined(__x86_64__)
void build_rules_for_walk(void* const* frames, int count);
#endif

__attribute__((noinline)) int cursor_backtrace(void** frames, int max) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
  int n = 0;
  while (n < max && unw_step(&cursor) > 0) {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0) break;
    frames[n++] = reinterpret_cast<void*>(ip);
  }
  return n;
}

namespace {

constinit thread_local FastUnwindCounters t_counters __attribute__((tls_model("initial-exec")));

// A thread's first fallbacks walk with a cursor: unw_backtrace's first
// call in a thread maps and fills a 256 KiB cache (64 page faults, ~0.85
// ms on this VM), and most threads fall back only until libdw is loaded,
// once or twice. A cursor walk costs ~2 us a frame, unw_backtrace's
// ~6 ns once its cache is made: past a few, the cache pays.
constexpr int kCursorFallbacks = 4;
constinit thread_local int t_cursor_fallbacks __attribute__((tls_model("initial-exec"))) = 0;

// unw_backtrace, minus this function's and fast_backtrace's own frames.
__attribute__((noinline)) int libunwind_backtrace(void** frames, int max) {
  void* all[kFastUnwindMaxFrames + 2];
  const int walked =
      t_cursor_fallbacks < kCursorFallbacks ? (++t_cursor_fallbacks, cursor_backtrace(all, max + 2))
                                            : unw_backtrace(all, max + 2);
#if defined(__x86_64__)
  // A rule that needed libdw sent this capture here: a whole stack free of
  // the loader may load it now (libdw_loader.h), and then the rules of
  // this walk's frames are built at once and go to the recording's store.
  // A path the process takes once (its start, its exit) would otherwise
  // never be built, and every later process would miss it too.
  if (load_libdw_after_walk(all, walked, walked < max + 2)) build_rules_for_walk(all, walked);
#endif
  int n = walked > 2 ? walked - 2 : 0;
  // Word by word: a memcpy's wide loads could not take the words
  // unw_backtrace just stored from the store buffer, and would stall.
  for (int i = 0; i < n; ++i) {
    frames[i] = all[i + 2];
    __asm__ volatile("" ::: "memory");  // not a memcpy call
  }
  ++t_counters.fallback;
  return n;
}

// Hands the capture to libunwind. Never as a tail call: libunwind_backtrace
// drops fast_backtrace's frame, which must still be there.
#define SPOOR_FALL_BACK()                                    \
  do {                                                       \
    const int fallback_n = libunwind_backtrace(frames, max); \
    __asm__ volatile("" ::: "memory");                       \
    return fallback_n;                                       \
  } while (0)

#if defined(__x86_64__)

constexpr int kAddressBits = 47;  // user-space x86-64 addresses lie below 2^47

// --- the thread's stack ------------------------------------------------------
// Captures read only between their own stack pointer and `top`. A thread
// whose stack pointer is outside [bottom, top) (a signal handler on an
// alternate stack, a coroutine) falls back.
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

// --- the thread's recent walks -------------------------------------------------
// Per step: the address whose rule the walk used, that rule, and where the
// frame sat (its sp, as an offset from the walk's first sp). A thread's
// captures mostly share the shim's frames at the bottom of the stack (same
// rules, same offsets) and the program's outer frames at the top (same
// rules, same absolute sp), and come from a handful of call paths. So a
// new walk predicts its rules from the latest walk, step for step (nothing
// to write while it repeats it); where it differs, from another recent
// walk that went the same way so far; failing that, after the difference,
// from the step where the latest walk stood at the same sp; elsewhere from
// the shared cache. A predicted rule costs no table lookup and, more than
// that, does not wait for the return address just loaded: the check of
// the prediction is a branch the CPU predicts, so it runs ahead down the
// stack.
constexpr int kWalks = 8;
constexpr int kRecordedSteps = 32;
struct Walk {
  uint64_t epoch;  // rules of another generation are not reused
  uintptr_t sp0;   // the walk's first sp
  int steps;       // 0: empty
  uint32_t used;   // RecentWalks::clock when last repeated or written
  int max;         // the capture's limit, and its last frame: with the
  void* last_frame;  // steps, they tell an identical capture
  uint64_t memo;   // the caller's word for this capture (fast_backtrace)
  uintptr_t address[kRecordedSteps];
  uint64_t rule[kRecordedSteps];    // an UnwindRule's bytes
  uint32_t offset[kRecordedSteps];  // sp - sp0
  // A hash of steps [0, i) (addresses and offsets): two walks with the
  // same one went the same way to step i. 64 bits, like the stack table's
  // hash of the frames, which a collision would confuse just as well.
  uint64_t prefix[kRecordedSteps];
};
struct RecentWalks {
  Walk walk[kWalks];
  uint32_t clock;
  int latest;
};
static_assert(sizeof(RecentWalks) <= 8192, "two pages per thread");

uint64_t extend_prefix(uint64_t prefix, uintptr_t address, uint32_t offset) {
  uint64_t h = (prefix + address) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 32;
  h = (h + offset) * 0xD6E8FEB86659FD93ull;
  return h ^ (h >> 32);
}

// Two pages per thread, mapped on its first capture and unmapped at its exit
// (a pthread key's destructor), so threads that never allocate pay
// nothing and the shim's static TLS stays small. `t_walks` 1: none (the
// thread is exiting, or the pages could not be mapped). `t_walking` keeps a
// walk that interrupts another (a signal handler's) away from them.
constexpr uintptr_t kNoWalks = 1;
constinit thread_local uintptr_t t_walks __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local bool t_walking __attribute__((tls_model("initial-exec"))) = false;
pthread_key_t g_walks_key;
std::atomic<bool> g_walks_key_ready{false};

void forget_thread_walks(void* page) {
  t_walks = kNoWalks;  // later captures of this thread (other key destructors) go without
  munmap(page, sizeof(RecentWalks));
}

__attribute__((noinline)) RecentWalks* map_thread_walks() {
  t_walks = kNoWalks;
  if (!g_walks_key_ready.load(std::memory_order_acquire)) return nullptr;
  void* page = mmap(nullptr, sizeof(RecentWalks), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return nullptr;
  if (pthread_setspecific(g_walks_key, page) != 0) {
    munmap(page, sizeof(RecentWalks));
    return nullptr;
  }
  t_walks = reinterpret_cast<uintptr_t>(page);  // zero: every walk empty
  return static_cast<RecentWalks*>(page);
}

RecentWalks* thread_walks() {
  const uintptr_t w = t_walks;
  if (w > kNoWalks) return reinterpret_cast<RecentWalks*>(w);
  return w == 0 ? map_thread_walks() : nullptr;
}

// Another recent walk that went through the same steps as `current` up to
// step n (< kRecordedSteps) and then used `address` at `offset`: the walk
// goes on predicting from it. (Its earlier steps must match too: a walk
// that repeats another to the end is taken for the same stack, memo and
// all.) Null when none.
__attribute__((noinline)) const Walk* other_walk_through(const RecentWalks* walks, const Walk* current, int n,
                                                         uintptr_t address, uint64_t offset, uint64_t epoch) {
  // The walk so far repeated `current`, up to its end at most: n <= its steps.
  uint64_t prefix = 0;
  if (current != nullptr && n > 0)
    prefix = n < current->steps ? current->prefix[n]
                                : extend_prefix(current->prefix[n - 1], current->address[n - 1], current->offset[n - 1]);
  for (const Walk& w : walks->walk)
    // The address first: one load per walk for the walks that do not match
    // (reading past a walk's steps is harmless: it only decides to look
    // closer).
    if (w.address[n] == address && &w != current && w.epoch == epoch && w.steps > n && w.offset[n] == offset &&
        w.prefix[n] == prefix)
      return &w;
  return nullptr;
}

struct RuleFound {
  uint64_t rule;  // an UnwindRule's bytes; 0 (kNone): fall back
  int next;       // the step of `latest` to predict from next
};

// The rule after the walk left the prediction: from the step of `latest`
// at the same sp if it has the same address (sp only grows, so the search
// resumes where it stopped: one pass over the walk per capture), else from
// the shared cache. Out of line: the predicted path stays short.
__attribute__((noinline)) RuleFound rule_off_prediction(const Walk* latest, int latest_steps, int r, uintptr_t sp,
                                                        uintptr_t address, uint64_t epoch) {
  if (latest != nullptr) {
    while (r < latest_steps && latest->sp0 + latest->offset[r] < sp) ++r;
    if (r < latest_steps && latest->sp0 + latest->offset[r] == sp && latest->address[r] == address)
      return {latest->rule[r], r + 1};
  }
  return {cached_rule(address, epoch), r};
}

// Keeps the walk just taken: the one it repeated (now cut to its length),
// or, in place of the least recently used, the steps it shared with
// `latest` (the first `same_steps`) and those it wrote down after.
// Returns the memo word of the walk kept: unchanged when the capture
// repeated it exactly (same steps, limit and last frame), else cleared.
uint64_t* keep_walk(RecentWalks* walks, const Walk* latest, int same_steps, int steps, int max, void* last_frame,
                    uintptr_t sp0, uint64_t epoch, const uintptr_t* new_address, const uint64_t* new_rule,
                    const uint32_t* new_offset) {
  const int kept = steps < kRecordedSteps ? steps : kRecordedSteps;
  const uint32_t now = ++walks->clock;
  if (same_steps < 0 && latest != nullptr) {
    Walk* w = const_cast<Walk*>(latest);
    const bool identical = w->steps == steps && w->max == max && w->last_frame == last_frame;
    w->steps = kept;
    w->sp0 = sp0;
    w->used = now;
    w->max = max;
    w->last_frame = last_frame;
    if (!identical) w->memo = 0;
    walks->latest = static_cast<int>(w - walks->walk);
    return &w->memo;
  }
  Walk* target = nullptr;
  for (Walk& w : walks->walk)
    if (&w != latest && (target == nullptr || w.used < target->used)) target = &w;
  const int shared = same_steps < 0 ? 0 : same_steps;
  // Word by word: new_* were just stored word by word, and the wide loads
  // of a memcpy could not take them from the store buffer (a stall of more
  // than the whole walk). The empty asm keeps the compiler from making
  // these loops memcpy calls.
  if (latest != nullptr) {
    for (int i = 0; i < shared; ++i) {
      target->address[i] = latest->address[i];
      target->rule[i] = latest->rule[i];
      target->offset[i] = latest->offset[i];
      __asm__ volatile("" ::: "memory");
    }
  }
  for (int i = shared; i < kept; ++i) {
    target->address[i] = new_address[i];
    target->rule[i] = new_rule[i];
    target->offset[i] = new_offset[i];
    __asm__ volatile("" ::: "memory");
  }
  uint64_t prefix = 0;
  for (int i = 0; i < kept; ++i) {
    target->prefix[i] = prefix;
    prefix = extend_prefix(prefix, target->address[i], target->offset[i]);
  }
  target->epoch = epoch;
  target->sp0 = sp0;
  target->steps = kept;
  target->used = now;
  target->max = max;
  target->last_frame = last_frame;
  target->memo = 0;
  walks->latest = static_cast<int>(target - walks->walk);
  return &target->memo;
}

using StackWord = uintptr_t __attribute__((may_alias));

// An UnwindRule's fields read from its bytes in a register (a shift or a
// sign extension each), so the walk moves a rule as one word.
struct RuleBits {
  uint64_t bits;
  UnwindRule::Kind kind() const { return static_cast<UnwindRule::Kind>(bits & 0xFF); }
  intptr_t ra_offset() const { return intptr_t{static_cast<int8_t>(bits >> 8)} * 8; }
  intptr_t rbp_offset() const { return intptr_t{static_cast<int8_t>(bits >> 16)} * 8; }
  intptr_t lowest_offset() const { return intptr_t{static_cast<int8_t>(bits >> 24)} * 8; }
  intptr_t cfa_offset() const { return static_cast<int32_t>(bits >> 32); }
};
static_assert(offsetof(UnwindRule, kind) == 0 && offsetof(UnwindRule, ra_word) == 1 &&
              offsetof(UnwindRule, rbp_word) == 2 && offsetof(UnwindRule, lowest_word) == 3 &&
              offsetof(UnwindRule, cfa_offset) == 4 && std::endian::native == std::endian::little);

// True for a return address the walk records: below 0x4000 libunwind ends
// a stack; at or above 2^47 it is no user-space address. One compare.
bool plausible_return_address(uintptr_t ra) {
  return ra - 0x4000 < (uintptr_t{1} << kAddressBits) - 0x4000;
}

enum class Step : uint8_t {
  kTaken,  // *ra is the caller's return address; sp and fp are the caller's
  kEnded,  // the stack ends here, well (an outermost frame, a return address below 0x4000)
  kStuck,  // the rule cannot be followed (no rule, or one that leaves the stack)
};

// The page of Go's heap this thread last read a g from, checked readable
// once: Go never unmaps its heap, nor frees a g.
constinit thread_local uintptr_t t_go_heap_page __attribute__((tls_model("initial-exec"))) = 0;

// Out of Go's asmcgocall (UnwindRule::kGoSystemStack, unwind_rule.cpp)
// onto the goroutine's stack: g and the goroutine stack's depth are in
// asmcgocall's frame at sp (this thread's stack), g.stack's bounds in g.
// g's page is first read with process_vm_readv (a read that fails ends
// the walk instead of faulting), then directly while it stays the
// thread's last: two system calls per goroutine page, not per capture
// (per capture they took a cgo program's 300,000 captures from 0.6 to
// 1.9 s). The goroutine's sp is g.stack.hi - depth, its return address on
// top; its frames keep rbp (Go's frame pointers, which the C frames
// restored), and `top` becomes the goroutine stack's. Out of line; by
// value, so that the walk's sp, top and ra stay in registers.
struct GoroutineStep {
  Step step;
  uintptr_t sp, top, ra;
};
__attribute__((noinline, no_sanitize("address"))) GoroutineStep step_onto_goroutine(uintptr_t sp, uintptr_t top) {
  if (sp + 0x38 > top) return {Step::kStuck, 0, 0, 0};
  const uintptr_t g = *reinterpret_cast<const StackWord*>(sp + 0x30);
  const uintptr_t depth = *reinterpret_cast<const StackWord*>(sp + 0x28);
  uintptr_t stack[2] = {0, 0};  // g.stack: lo, hi
  constexpr uintptr_t kPage = 4096;
  const uintptr_t page = g & ~(kPage - 1);
  if (g % 8 != 0 || (g & (kPage - 1)) > kPage - sizeof stack) return {Step::kStuck, 0, 0, 0};
  if (page != t_go_heap_page || page == 0) {
    if (!read_own_memory(stack, g, sizeof stack)) return {Step::kStuck, 0, 0, 0};
    t_go_heap_page = page;
  } else {
    stack[0] = *reinterpret_cast<const uintptr_t*>(g);
    stack[1] = *reinterpret_cast<const uintptr_t*>(g + 8);
  }
  const uintptr_t lo = stack[0], hi = stack[1];
  if (lo >= hi || depth < 8 || depth > hi - lo || depth % 8 != 0) return {Step::kStuck, 0, 0, 0};
  const uintptr_t goroutine_sp = hi - depth;
  const uintptr_t ra = *reinterpret_cast<const StackWord*>(goroutine_sp);
  if (!plausible_return_address(ra)) return {Step::kStuck, 0, 0, 0};
  return {Step::kTaken, goroutine_sp + 8, hi, ra};
}

// One step by `rule` out of the frame at `sp` (`fp` its rbp): the CFA from
// rsp or rbp, checked to lie within the stack (above sp and its slots at
// or above it, when from rbp), then the return address and the saved rbp
// loaded from it (or the step out of Go's asmcgocall, which moves sp and
// `top` to the goroutine's stack). The one step of every walk here;
// inlined into each loop.
__attribute__((always_inline, no_sanitize("address"))) inline Step step_by_rule(RuleBits rule, uintptr_t& top,
                                                                              uintptr_t& sp, uintptr_t& fp,
                                                                              uintptr_t& ra) {
  uintptr_t cfa;
  if (rule.kind() == UnwindRule::kFromRsp) {
    // The rule guarantees the CFA above sp and its slots at or above it.
    cfa = sp + rule.cfa_offset();
    if (cfa > top) return Step::kStuck;
  } else if (rule.kind() == UnwindRule::kFromRbp) {
    cfa = fp + rule.cfa_offset();
    // Above this frame's sp (CFAs grow strictly: the walk ends), within
    // the stack, and its slots at or above sp.
    if (cfa <= sp || cfa > top || cfa + rule.lowest_offset() < sp) return Step::kStuck;
  } else if (rule.kind() == UnwindRule::kGoSystemStack) {
    const GoroutineStep go = step_onto_goroutine(sp, top);
    if (go.step == Step::kTaken) {
      sp = go.sp;
      top = go.top;
      ra = go.ra;
    }
    return go.step;
  } else {
    return rule.kind() == UnwindRule::kOutermost ? Step::kEnded : Step::kStuck;
  }
  ra = *reinterpret_cast<const StackWord*>(cfa + rule.ra_offset());
  if (rule.rbp_offset() != 0) fp = *reinterpret_cast<const StackWord*>(cfa + rule.rbp_offset());
  if (!plausible_return_address(ra)) return ra < 0x4000 ? Step::kEnded : Step::kStuck;
  sp = cfa;
  return Step::kTaken;
}

#endif  // __x86_64__

}  // namespace

#if defined(__x86_64__)

void prime_thread_stack() { look_up_thread_stack(&t_stack); }

bool init_fast_unwind(void (*libdw_loaded)()) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return rule_cache_ready();
  prime_thread_stack();  // the attaching thread: the main one
  if (pthread_key_create(&g_walks_key, forget_thread_walks) == 0)
    g_walks_key_ready.store(true, std::memory_order_release);
  init_libdw_loader(libdw_loaded);
  return init_rule_cache();
}

void prepare_unwinder_for_threads() { load_libdw_before_threads(); }

// The walk: per frame, one rule (predicted, or from the shared cache), a
// bounds check and one or two loads from the stack. Reading other frames'
// slots is what it is for, so AddressSanitizer does not instrument it.
__attribute__((noinline, no_sanitize("address"))) int fast_backtrace(void** frames, int max, uint64_t** memo) {
  if (memo != nullptr) *memo = nullptr;
  if (max > kFastUnwindMaxFrames) max = kFastUnwindMaxFrames;
  if (max <= 0) return 0;
  const uint64_t epoch = g_unwind_epoch.load(std::memory_order_acquire);
  if (!rule_cache_ready() || (epoch & kUnloadsInProgress) != 0) SPOOR_FALL_BACK();

  // This frame's state: its PC (the address after the lea), stack and frame
  // pointers. The asm does not move rsp, so the CFI row at `pc` holds.
  uintptr_t pc, sp, fp;
  __asm__ volatile(
      "lea 0(%%rip), %0\n\t"
      "mov %%rsp, %1\n\t"
      "mov %%rbp, %2"
      : "=r"(pc), "=r"(sp), "=r"(fp));
  // A thread never primed (top 0) fails the check: libunwind walks it.
  const ThreadStack& stack = t_stack;
  if (sp < stack.bottom || sp >= stack.top) SPOOR_FALL_BACK();
  // The stack's top; a goroutine's after a cgo call's frames (then the
  // walk is not kept: its offsets from sp0 mean nothing there).
  const uintptr_t thread_top = stack.top;
  uintptr_t top = thread_top;

  const bool nested = t_walking;
  t_walking = true;
  RecentWalks* const walks = nested ? nullptr : thread_walks();
  const Walk* latest = walks != nullptr ? &walks->walk[walks->latest] : nullptr;
  if (latest != nullptr && latest->epoch != epoch) latest = nullptr;
  int latest_steps = latest != nullptr ? latest->steps : 0;
  const uintptr_t sp0 = sp;
  // Steps from the first that differs from `latest` are written here and
  // kept at the end (the recent walks are read until then).
  uintptr_t new_address[kRecordedSteps];
  uint64_t new_rule[kRecordedSteps];
  uint32_t new_offset[kRecordedSteps];
  int same_steps = -1;  // -1 while the walk repeats `latest` step for step
  int r = 0;            // the step of `latest` to predict from, once it differs

  uintptr_t address = pc;  // where this frame's rule is looked up
  int n = 0;
  int steps = -1;  // rules used, once the walk has ended well; -1: fall back
  for (;;) {
    // The common case, kept tight: a predicted step with CFA = rsp + N.
    if (same_steps < 0) {
      // Repeating `latest`: its offsets repeat too (checked on entry:
      // steps from rbp may have moved them), and nothing is written.
      const int limit = latest_steps < max ? latest_steps : max;
      if (n < limit && latest->offset[n] == sp - sp0) {
        while (n < limit && latest->address[n] == address) {
          const RuleBits rule{latest->rule[n]};
          if (rule.kind() != UnwindRule::kFromRsp) break;
          const uintptr_t cfa = sp + rule.cfa_offset();
          if (cfa > top) break;
          const uintptr_t ra = *reinterpret_cast<const StackWord*>(cfa + rule.ra_offset());
          if (!plausible_return_address(ra)) break;
          if (rule.rbp_offset() != 0) fp = *reinterpret_cast<const StackWord*>(cfa + rule.rbp_offset());
          frames[n++] = reinterpret_cast<void*>(ra);
          sp = cfa;
          address = ra - 1;
        }
      }
    } else {
      // After the first difference: from `latest`'s step r, writing the
      // steps down.
      while (n < max && r < latest_steps && latest->address[r] == address) {
        const RuleBits rule{latest->rule[r]};
        if (rule.kind() != UnwindRule::kFromRsp) break;
        const uintptr_t cfa = sp + rule.cfa_offset();
        if (cfa > top) break;
        const uintptr_t ra = *reinterpret_cast<const StackWord*>(cfa + rule.ra_offset());
        if (!plausible_return_address(ra)) break;
        if (rule.rbp_offset() != 0) fp = *reinterpret_cast<const StackWord*>(cfa + rule.rbp_offset());
        if (n < kRecordedSteps) {
          new_address[n] = address;
          new_rule[n] = rule.bits;
          new_offset[n] = static_cast<uint32_t>(sp - sp0);
        }
        frames[n++] = reinterpret_cast<void*>(ra);
        ++r;
        sp = cfa;
        address = ra - 1;
      }
    }
    if (n == max) {
      steps = n;
      break;
    }
    // Any other step.
    RuleBits rule;
    if (same_steps < 0 && n < latest_steps && latest->address[n] == address && latest->offset[n] == sp - sp0) {
      rule.bits = latest->rule[n];
    } else {
      if (same_steps < 0 && walks != nullptr && n < kRecordedSteps) {
        // Another recent walk may have gone this way: predict from it.
        const Walk* other = other_walk_through(walks, latest, n, address, sp - sp0, epoch);
        if (other != nullptr) {
          latest = other;
          latest_steps = other->steps;
          continue;
        }
      }
      if (same_steps < 0) same_steps = r = n;
      if (r < latest_steps && latest->address[r] == address) {
        rule.bits = latest->rule[r++];
      } else {
        const RuleFound found = rule_off_prediction(latest, latest_steps, r, sp, address, epoch);
        rule.bits = found.rule;
        r = found.next;
        if (rule.kind() == UnwindRule::kNone) break;
      }
      if (n < kRecordedSteps) {
        new_address[n] = address;
        new_rule[n] = rule.bits;
        new_offset[n] = static_cast<uint32_t>(sp - sp0);
      }
    }
    uintptr_t ra;
    const Step step = step_by_rule(rule, top, sp, fp, ra);
    if (step != Step::kTaken) {
      // On a goroutine's stack, where libunwind does not go, the frames
      // found are the stack (Go's outermost frames keep no frame chain).
      if (step == Step::kEnded || top != thread_top) steps = n + 1;
      break;
    }
    frames[n++] = reinterpret_cast<void*>(ra);
    address = ra - 1;  // the call instruction: its rule, not the next one's
  }
  t_walking = nested;
  // A frame the fast path does not take: libunwind does the whole capture.
  if (steps < 0) SPOOR_FALL_BACK();
  // A stack of 4 GiB or more does not fit the offsets: not kept.
  if (walks != nullptr && top == thread_top && sp - sp0 < UINT32_MAX) {
    uint64_t* const word = keep_walk(walks, latest, same_steps, steps, max, n > 0 ? frames[n - 1] : nullptr, sp0,
                                     epoch, new_address, new_rule, new_offset);
    // A walk longer than the record was not checked step by step.
    if (memo != nullptr && steps <= kRecordedSteps) *memo = word;
  }
  ++t_counters.fast;
  return n;
}

namespace {

// Addresses whose rules a signal walk of this thread missed, for
// build_missed_rules: the one the walk stopped at, then those of the
// frames libunwind found.
constexpr int kMissedRules = 16;
constinit thread_local uintptr_t t_missed_rule[kMissedRules] __attribute__((tls_model("initial-exec"))) = {};
constinit thread_local int t_missed_rules __attribute__((tls_model("initial-exec"))) = 0;

// A walk from the frame whose code is at `address` (an exact PC, or a
// return address - 1), with its sp and rbp, by the cached rules alone:
// how many callers it stored, or -1 where a rule is missing or leaves the
// stack (the caller goes on otherwise). fast_backtrace's steps, without
// its predictions.
__attribute__((no_sanitize("address"))) int walk_cached_rules(uintptr_t address, uintptr_t sp, uintptr_t fp,
                                                              uintptr_t top, uint64_t epoch, void** frames,
                                                              int max) {
  const uintptr_t thread_top = top;
  int n = 0;
  while (n < max) {
    RuleBits rule{cached_rule(address, epoch)};
    if (rule.kind() == UnwindRule::kNone) {
      // Not cached (built later, outside the signal handler). A thread
      // that stays in C code called through cgo takes no hook where they
      // would be built: Go's asmcgocall is recognised here, and on the
      // goroutine's stack Go's frames keep frame pointers: the guess.
      if (top != thread_top) {
        rule.bits = std::bit_cast<uint64_t>(frame_chain_guess());
      } else if (is_go_asmcgocall_return(address)) {
        rule.bits = std::bit_cast<uint64_t>(go_system_stack_rule());
      } else if (t_missed_rules < kMissedRules) {
        t_missed_rule[t_missed_rules++] = address;
      }
    }
    uintptr_t ra;
    const Step step = step_by_rule(rule, top, sp, fp, ra);
    if (step != Step::kTaken) return step == Step::kEnded || top != thread_top ? n : -1;
    frames[n++] = reinterpret_cast<void*>(ra);
    address = ra - 1;
  }
  return n;
}

// The cached rules only: a signal may have interrupted malloc.
struct NoRuleBuilding {
  bool was = t_no_rule_building;
  NoRuleBuilding() { t_no_rule_building = true; }
  ~NoRuleBuilding() { t_no_rule_building = was; }
};

}  // namespace

int fast_backtrace_from_signal(const void* ucontext, void** frames, int max, bool* missed) {
  *missed = false;
  if (max > kFastUnwindMaxFrames) max = kFastUnwindMaxFrames;
  if (max <= 0) return 0;
  const ThreadStack& stack = t_stack;
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  const auto pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  const auto interrupted_sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  const auto interrupted_fp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RBP]);
  frames[0] = reinterpret_cast<void*>(pc);
  if (max == 1) return 1;
  const uint64_t epoch = g_unwind_epoch.load(std::memory_order_acquire);
  // Off the thread's known stack (a thread never primed, an alternate
  // signal stack, a coroutine's) the rules cannot check their loads:
  // libunwind's cursor walks it all.
  const bool on_stack = interrupted_sp >= stack.bottom && interrupted_sp < stack.top;
  const bool rules_usable = on_stack && rule_cache_ready() && (epoch & kUnloadsInProgress) == 0;
  const int missed_before = t_missed_rules;
  // The interrupted frame by the rule at its exact PC, when cached: no
  // libunwind at all (its first step costs ~2 us, bench/RESULTS.md).
  if (rules_usable) {
    const NoRuleBuilding no_building;
    const int rest = walk_cached_rules(pc, interrupted_sp, interrupted_fp, stack.top, epoch, frames + 1, max - 1);
    if (rest >= 0) {
      ++t_counters.signal_fast;
      return 1 + rest;
    }
  }
  // libunwind would look for the frame's unwind tables with
  // dl_iterate_phdr: not while the loader's lock is half taken (by the
  // interrupted code, most likely: loader_lock.h). The interrupted
  // instruction alone; the rules the walk missed are built for the next
  // sample.
  if (loader_lock_half_taken()) {
    *missed = t_missed_rules != 0;
    return 1;
  }
  // Else libunwind steps out of the interrupted frame (at any
  // instruction), and the rules go on from its caller.
  // The cursor, not unw_backtrace: that one keeps a 256 KiB cache per
  // thread, made at the thread's first walk, which would then be made here
  // (and every process would pay ~1 ms to make its main thread's ahead).
  unw_cursor_t cursor;
  if (unw_init_local2(&cursor, const_cast<unw_context_t*>(reinterpret_cast<const unw_context_t*>(uc)),
                      UNW_INIT_SIGNAL_FRAME) != 0) {
    *missed = t_missed_rules != missed_before;
    return 1;  // the interrupted instruction alone
  }
  int n = 1;
  unw_word_t ip = 0, sp = 0, fp = 0;
  if (unw_step(&cursor) <= 0) {
    *missed = t_missed_rules != missed_before;
    return n;
  }
  if (rules_usable && unw_get_reg(&cursor, UNW_REG_IP, &ip) == 0 && unw_get_reg(&cursor, UNW_REG_SP, &sp) == 0 &&
      unw_get_reg(&cursor, UNW_X86_64_RBP, &fp) == 0 && sp >= stack.bottom && sp < stack.top &&
      plausible_return_address(ip)) {
    frames[1] = reinterpret_cast<void*>(ip);
    const NoRuleBuilding no_building;
    const int rest = max > 2 ? walk_cached_rules(ip - 1, sp, fp, stack.top, epoch, frames + 2, max - 2) : 0;
    if (rest >= 0) {
      ++t_counters.signal_fast;
      *missed = t_missed_rules != missed_before;
      return 2 + rest;
    }
  }
  // libunwind from the caller on, as unw_backtrace would have gone.
  do {
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    frames[n++] = reinterpret_cast<void*>(ip);
  } while (n < max && unw_step(&cursor) > 0);
  ++t_counters.signal_libunwind;
  // The rules of the return addresses libunwind found, to build for the
  // next sample of this stack: one walk then learns many, not one.
  if (rules_usable) {
    const NoRuleBuilding no_building;
    for (int f = 1; f < n && t_missed_rules < kMissedRules; ++f) {
      const uintptr_t address = reinterpret_cast<uintptr_t>(frames[f]) - 1;
      if (cached_rule(address, epoch) == 0) t_missed_rule[t_missed_rules++] = address;
    }
  }
  // Any rule waiting to be built, from this walk or an earlier one.
  *missed = t_missed_rules != 0;
  return n;
}

// Frame 0 is libunwind_backtrace's own PC; the rest are return addresses,
// whose rules are those of their call instructions.
void build_rules_for_walk(void* const* frames, int count) {
  const uint64_t epoch = g_unwind_epoch.load(std::memory_order_acquire);
  if (!rule_cache_ready() || (epoch & kUnloadsInProgress) != 0) return;
  for (int i = 1; i < count; ++i) cached_rule(reinterpret_cast<uintptr_t>(frames[i]) - 1, epoch);
}

void build_missed_rules() {
  const uint64_t epoch = g_unwind_epoch.load(std::memory_order_acquire);
  if (!rule_cache_ready() || (epoch & kUnloadsInProgress) != 0) return;
  // A sample's misses are arbitrary instructions, whose rules only libdw
  // has (the handler's walk asked the store already): they wait for libdw
  // rather than load it, so a process the store serves never maps it
  // because a sample landed somewhere new.
  if (libdw() == nullptr) {
    t_missed_rules = 0;
    return;
  }
  for (int i = 0; i < t_missed_rules; ++i) cached_rule(t_missed_rule[i], epoch);
  t_missed_rules = 0;
}

#else  // other architectures: libunwind

int fast_backtrace_from_signal(const void*, void**, int, bool* missed) {
  *missed = false;
  return -1;
}
void build_missed_rules() {}
bool init_fast_unwind(void (*)()) { return false; }
void prepare_unwinder_for_threads() {}
void prime_thread_stack() {}
__attribute__((noinline)) int fast_backtrace(void** frames, int max, uint64_t** memo) {
  if (memo != nullptr) *memo = nullptr;
  if (max > kFastUnwindMaxFrames) max = kFastUnwindMaxFrames;
  if (max <= 0) return 0;
  SPOOR_FALL_BACK();
}
void begin_module_unload() {}
void end_module_unload() { unw_flush_cache(unw_local_addr_space, 0, 0); }
uint64_t rules_built_here() { return 0; }
uint64_t rules_not_kept_here() { return 0; }
uint64_t rules_from_store_here() { return 0; }

#endif

FastUnwindCounters fast_unwind_counters() {
  FastUnwindCounters c = t_counters;
  c.rules_built = rules_built_here();
  c.rules_not_kept = rules_not_kept_here();
  c.rules_from_store = rules_from_store_here();
  return c;
}

}  // namespace spoor::preload
