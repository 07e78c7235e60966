// The fast unwinder must give exactly what unw_backtrace gives, frame for
// frame, and must give it by itself (without falling back to libunwind) on
// ordinary stacks: -O2 code without frame pointers, frame-pointer and
// alloca frames, the C library's qsort, std::sort, another module through
// the PLT, other threads. Signal handlers may fall back but must agree too.
#include "fast_unwind.h"
#include "loader_lock.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "call_shapes.h"
#include "libdw_loader.h"
#include "rule_cache.h"
#include "unwind_rule.h"

namespace spoor::preload {
namespace {

constexpr int kMaxFrames = 160;
constexpr int kMaxCaptures = 512;

// One stack captured both ways from the same frame. Fixed storage: leaves
// run inside signal handlers too.
struct Capture {
  int fast_n, libunwind_n;
  void* fast[kMaxFrames];
  void* libunwind[kMaxFrames];
  uint64_t by_fast_path, by_fallback;
};
Capture g_captures[kMaxCaptures];
int g_count = 0;
int g_max = 64;

__attribute__((noinline)) void capture_both() {
  if (g_count >= kMaxCaptures) return;
  Capture& c = g_captures[g_count++];
  const FastUnwindCounters before = fast_unwind_counters();
  c.fast_n = fast_backtrace(c.fast, g_max);
  const FastUnwindCounters after = fast_unwind_counters();
  c.libunwind_n = unw_backtrace(c.libunwind, g_max);
  c.by_fast_path = after.fast - before.fast;
  c.by_fallback = after.fallback - before.fallback;
  __asm__ volatile("" ::: "memory");
}

// Both stacks, one frame a line, with the symbols dladdr finds.
std::string side_by_side(const Capture& c) {
  std::string out = "fast_backtrace | unw_backtrace\n";
  auto describe = [](void* const* frames, int n, int f) {
    if (f >= n) return std::string("-");
    Dl_info info{};
    const char* name = dladdr(frames[f], &info) != 0 && info.dli_sname != nullptr ? info.dli_sname : "?";
    char text[160];
    std::snprintf(text, sizeof text, "%p %s", frames[f], name);
    return std::string(text);
  };
  for (int f = 0; f < c.fast_n || f < c.libunwind_n; ++f)
    out += std::to_string(f) + ": " + describe(c.fast, c.fast_n, f) + " | " +
           describe(c.libunwind, c.libunwind_n, f) + "\n";
  return out;
}

// n, hidden from the optimiser: a loop up to it is not unrolled, so every
// round captures from the same call site, hence the same frames.
int opaque(int n) {
  __asm__ volatile("" : "+r"(n));
  return n;
}

class FastUnwind : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    ASSERT_TRUE(init_fast_unwind());  // primes this thread's stack bounds
    // libdw at once: these tests are about the rules, and a shim loads it
    // at a capture's first miss (libdw_loader_test.cpp).
    ASSERT_NE(load_libdw_now(), nullptr);
  }
  void SetUp() override {
    g_count = 0;
    g_max = 64;
  }

  // Every capture since SetUp: same frames both ways (frames[0] are two
  // call sites in capture_both, so they differ by design), and, when
  // `fast_path` is true, done without libunwind. Returns the number of
  // captures checked.
  static int expect_captures_agree(bool fast_path) {
    for (int i = 0; i < g_count; ++i) {
      const Capture& c = g_captures[i];
      SCOPED_TRACE("capture " + std::to_string(i));
      const int n = c.fast_n < c.libunwind_n ? c.fast_n : c.libunwind_n;
      EXPECT_GT(n, 1);
      bool same = c.fast_n == c.libunwind_n;
      for (int f = 1; f < n; ++f) same = same && c.fast[f] == c.libunwind[f];
      EXPECT_TRUE(same) << side_by_side(c);
      const auto d = reinterpret_cast<uintptr_t>(c.fast[0]) - reinterpret_cast<uintptr_t>(c.libunwind[0]);
      EXPECT_LT(d + 4096, 8192u) << "frame 0 is a return address into capture_both";
      if (fast_path) {
        EXPECT_EQ(c.by_fast_path, 1u);
        EXPECT_EQ(c.by_fallback, 0u);
      }
    }
    return g_count;
  }
};

TEST_F(FastUnwind, MatchesLibunwindThroughRecursionWithoutFramePointers) {
  for (int depth : {0, 1, 5, 20, 50}) test::recurse_without_frame_pointer(depth, capture_both);
  EXPECT_EQ(expect_captures_agree(true), 5);
}

TEST_F(FastUnwind, MatchesLibunwindThroughFramePointerAndAllocaFrames) {
  g_max = 128;
  test::recurse_with_frame_pointer(30, capture_both);
  test::recurse_with_alloca(30, capture_both);
  EXPECT_EQ(expect_captures_agree(true), 2);
}

TEST_F(FastUnwind, StopsAtTheDepthLimit) {
  g_max = 128;
  test::recurse_without_frame_pointer(300, capture_both);
  g_max = 7;
  test::recurse_without_frame_pointer(300, capture_both);
  EXPECT_EQ(expect_captures_agree(true), 2);
  EXPECT_EQ(g_captures[0].fast_n, 128);
  EXPECT_EQ(g_captures[1].fast_n, 7);
}

TEST_F(FastUnwind, MatchesLibunwindInsideQsortCallbacksInTheCLibrary) {
  test::sort_with_qsort(capture_both);
  EXPECT_EQ(expect_captures_agree(true), 3);
}

TEST_F(FastUnwind, MatchesLibunwindInsideStdSortComparators) {
  test::sort_with_std_sort(capture_both);
  EXPECT_EQ(expect_captures_agree(true), 3);
}

TEST_F(FastUnwind, MatchesLibunwindThroughPltCallsIntoASharedLibrary) {
  spoor_test_plt_recurse(0, capture_both);
  spoor_test_plt_recurse(12, capture_both);
  EXPECT_EQ(expect_captures_agree(true), 2);
}

TEST_F(FastUnwind, MatchesLibunwindOnManyRandomCallChains) {
  g_max = 128;
  uint64_t seed = 12345;
  for (int i = 0; i < 400; ++i) {
    seed = seed * 2862933555777941757ull + 3037000493ull;
    test::random_call_chain(seed, static_cast<int>(seed >> 58) + 1, capture_both);
  }
  EXPECT_EQ(expect_captures_agree(true), 400);
}

TEST_F(FastUnwind, MatchesLibunwindOnOtherThreads) {
  std::thread([] {
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    prime_thread_stack();  // as the shim's thread trampoline does
    test::recurse_without_frame_pointer(10, capture_both);
    test::sort_with_qsort(capture_both);
  }).join();
  EXPECT_EQ(expect_captures_agree(true), 4);
}

// A thread whose stack bounds were never looked up (one the shim did not
// start: the lookup may not run inside a capture) is unwound by libunwind,
// and right.
TEST_F(FastUnwind, AThreadNeverPrimedIsUnwoundByLibunwind) {
  FastUnwindCounters counters;
  std::thread([&counters] {
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    test::recurse_without_frame_pointer(10, capture_both);
    counters = fast_unwind_counters();
  }).join();
  EXPECT_EQ(expect_captures_agree(false), 1);
  EXPECT_EQ(counters.fast, 0u);
  EXPECT_EQ(counters.fallback, 1u);
}

// Both ways from one frame, compared at once (for threads: no shared
// storage). Counts captures, mismatches and captures done by the fast path.
std::atomic<int> g_compared{0}, g_mismatched{0}, g_by_fast_path{0};
__attribute__((noinline)) void compare_here() {
  void* fast[kMaxFrames];
  void* libunwind[kMaxFrames];
  const FastUnwindCounters before = fast_unwind_counters();
  const int fast_n = fast_backtrace(fast, 128);
  const FastUnwindCounters after = fast_unwind_counters();
  const int libunwind_n = unw_backtrace(libunwind, 128);
  bool same = fast_n == libunwind_n && fast_n > 1;
  for (int f = 1; same && f < fast_n; ++f) same = fast[f] == libunwind[f];
  g_compared.fetch_add(1);
  if (!same) g_mismatched.fetch_add(1);
  if (after.fast > before.fast) g_by_fast_path.fetch_add(1);
  __asm__ volatile("" ::: "memory");
}

// Threads building and reading the shared rules at the same time: a thread
// that finds another building falls back to libunwind for that capture;
// every capture still agrees.
TEST_F(FastUnwind, MatchesLibunwindOnThreadsCapturingAtOnce) {
  g_compared = g_mismatched = g_by_fast_path = 0;
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    prime_thread_stack();  // as the shim's thread trampoline does
      uint64_t seed = 777 + t;
      for (int i = 0; i < 300; ++i) {
        seed = seed * 2862933555777941757ull + 3037000493ull;
        test::random_call_chain(seed, static_cast<int>(seed >> 59) + 1, compare_here);
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(g_compared.load(), 1200);
  EXPECT_EQ(g_mismatched.load(), 0);
  // How many fell back depends on timing (a capture that needs a rule
  // while another thread builds one); once the rules are built none do.
  EXPECT_GT(g_by_fast_path.load(), 0);
}

// fork while other threads may be building rules: the child's captures
// agree too (the build lock is held across fork, so libdw's state is whole).
TEST_F(FastUnwind, MatchesLibunwindInAForkedChild) {
  std::atomic<bool> stop{false};
  std::thread busy([&stop] {
    prime_thread_stack();
    uint64_t seed = 99;
    while (!stop.load()) {
      seed = seed * 2862933555777941757ull + 3037000493ull;
      test::random_call_chain(seed, static_cast<int>(seed >> 59) + 1, [] {
        void* frames[64];
        fast_backtrace(frames, 64);
      });
    }
  });
  const pid_t child = fork();
  if (child == 0) {
    g_compared = g_mismatched = g_by_fast_path = 0;
    uint64_t seed = 4242;
    for (int i = 0; i < 100; ++i) {
      seed = seed * 2862933555777941757ull + 3037000493ull;
      test::random_call_chain(seed, static_cast<int>(seed >> 59) + 1, compare_here);
    }
    _exit(g_mismatched.load() == 0 && g_by_fast_path.load() == 100 ? 0 : 1);
  }
  stop = true;
  busy.join();
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's captures disagreed";
}

// A cached rule is reused: the second capture of a stack builds none.
TEST_F(FastUnwind, BuildsEachRuleOnce) {
  uint64_t built[2];
  for (int i = 0; i < opaque(2); ++i) {
    test::recurse_with_alloca(9, capture_both);
    built[i] = fast_unwind_counters().rules_built;
  }
  EXPECT_EQ(built[1], built[0]);
  EXPECT_EQ(expect_captures_agree(true), 2);
}

// The memo word: what was stored after a capture comes back with a later
// capture of the very same frames, and only then.
uint64_t* g_memo = nullptr;
int g_memo_frames = 0;
__attribute__((noinline)) void capture_memo() {
  void* frames[kMaxFrames];
  g_memo_frames = fast_backtrace(frames, 64, &g_memo);
  __asm__ volatile("" ::: "memory");
}

TEST_F(FastUnwind, GivesTheMemoWordBackForTheSameFramesOnly) {
  // One call site, stacks of three depths in turn, then a fourth: each
  // finds the word stored for it, and a new stack finds 0.
  bool seen[4] = {};
  const int depths[] = {0, 1, 2, 1, 0, 2, 2, 3};
  for (int i = 0; i < opaque(8); ++i) {
    const int depth = depths[i];
    test::recurse_without_frame_pointer(depth, capture_memo);
    ASSERT_NE(g_memo, nullptr);
    if (seen[depth]) {
      EXPECT_EQ(*g_memo, 100u + static_cast<uint64_t>(depth)) << "depth " << depth;
    } else {
      EXPECT_EQ(*g_memo, 0u) << "depth " << depth << ", not seen before";
    }
    *g_memo = 100 + static_cast<uint64_t>(depth);
    seen[depth] = true;
  }
  // A limit that cuts the same stack elsewhere: another capture.
  const int limits[] = {64, 5};
  for (int i = 0; i < opaque(2); ++i) {
    const int max = limits[i];
    void* frames[64];
    uint64_t* memo = nullptr;
    fast_backtrace(frames, max, &memo);
    ASSERT_NE(memo, nullptr);
    if (max == 64) *memo = 7;
    else EXPECT_EQ(*memo, 0u);
  }
}

void on_signal(int) { test::recurse_without_frame_pointer(3, capture_both); }

// Through the kernel's signal frame: libunwind's business (a fallback), but
// the frames must still agree, on the thread's stack and on an alternate one.
TEST_F(FastUnwind, MatchesLibunwindInsideSignalHandlers) {
  struct sigaction action {}, old {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &action, &old), 0);
  test::recurse_without_frame_pointer(4, [] { raise(SIGUSR1); });

  std::vector<char> alternate(1 << 16);
  stack_t stack{}, old_stack{};
  stack.ss_sp = alternate.data();
  stack.ss_size = alternate.size();
  ASSERT_EQ(sigaltstack(&stack, &old_stack), 0);
  action.sa_flags = SA_ONSTACK;
  ASSERT_EQ(sigaction(SIGUSR1, &action, nullptr), 0);
  test::recurse_without_frame_pointer(4, [] { raise(SIGUSR1); });
  sigaltstack(&old_stack, nullptr);
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(expect_captures_agree(false), 2);
}

// Two builds of one library, loaded one after the other where the first
// was: the cached rules of the first must not unwind the second. The shim
// calls begin/end_module_unload around dlclose; so does this test. The
// second capture runs on a new thread: libunwind's per-thread trace cache
// is not emptied by unw_flush_cache, and would be the stale one.
TEST_F(FastUnwind, ForgetsRulesWhenAModuleIsUnloaded) {
  void* first = dlopen(SPOOR_RELOAD_LIB_SMALL, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(first, nullptr) << dlerror();
  auto call = reinterpret_cast<decltype(&spoor_test_reload_call)>(dlsym(first, "spoor_test_reload_call"));
  ASSERT_NE(call, nullptr);
  call(capture_both);
  const uintptr_t first_at = reinterpret_cast<uintptr_t>(call);
  begin_module_unload();
  ASSERT_EQ(dlclose(first), 0);
  end_module_unload();  // also flushes libunwind's caches

  void* second = dlopen(SPOOR_RELOAD_LIB_LARGE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(second, nullptr) << dlerror();
  call = reinterpret_cast<decltype(&spoor_test_reload_call)>(dlsym(second, "spoor_test_reload_call"));
  ASSERT_NE(call, nullptr);
  std::thread([call] {
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    prime_thread_stack();  // as the shim's thread trampoline does
    call(capture_both);
  }).join();
  const uintptr_t second_at = reinterpret_cast<uintptr_t>(call);
  EXPECT_EQ(expect_captures_agree(true), 2);
  // Same address, or the test proved nothing about stale rules.
  EXPECT_EQ(second_at, first_at);
  dlclose(second);
}

// Code in no module, as a JIT makes it: anonymous executable memory, no
// unwind table, frames kept with rbp as the frame pointer.
//   calls_first:  push rbp; mov rbp, rsp; call rdi; pop rbp; ret
//   calls_second: push rbp; mov rbp, rsp; mov rax, rdi; mov rdi, rsi;
//                 call rax; pop rbp; ret
//   cpython:      sub $8, %rsp; call *%rcx; add $8, %rsp; ret
//                 (CPython's perf trampoline; the callee in the fourth
//                 argument, rcx)
struct JitCode {
  using CallsFirst = void (*)(void (*)());
  using CallsSecond = void (*)(CallsFirst, void (*)());
  using CpythonTrampoline = void (*)(void*, void*, void*, void (*)());
  static constexpr unsigned char kCallsFirst[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};
  static constexpr unsigned char kCallsSecond[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
                                                   0x89, 0xf7, 0xff, 0xd0, 0x5d, 0xc3};
  static constexpr unsigned char kCpython[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
  void* page = MAP_FAILED;
  CallsFirst calls_first = nullptr;
  CallsSecond calls_second = nullptr;
  CpythonTrampoline cpython = nullptr;
  JitCode() {
    page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return;
    auto* bytes = static_cast<unsigned char*>(page);
    std::memcpy(bytes, kCallsFirst, sizeof kCallsFirst);
    std::memcpy(bytes + 64, kCallsSecond, sizeof kCallsSecond);
    std::memcpy(bytes + 128, kCpython, sizeof kCpython);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) return;
    calls_first = reinterpret_cast<CallsFirst>(bytes);
    calls_second = reinterpret_cast<CallsSecond>(bytes + 64);
    cpython = reinterpret_cast<CpythonTrampoline>(bytes + 128);
  }
  ~JitCode() {
    if (page != MAP_FAILED) munmap(page, 4096);
  }
};

__attribute__((noinline)) void through_jit_code(const JitCode& jit) {
  jit.calls_first(capture_both);
  jit.calls_second(jit.calls_first, capture_both);
  __asm__ volatile("" ::: "memory");
}

TEST_F(FastUnwind, MatchesLibunwindThroughCodeInNoModuleWithoutFallingBack) {
  // libunwind guesses rbp is the frame pointer there, and checks each load
  // with system calls; the fast path makes the same guess within the
  // thread's stack.
  const JitCode jit;
  ASSERT_NE(jit.calls_first, nullptr) << "no executable anonymous memory";
  static const JitCode* g_jit = nullptr;
  g_jit = &jit;
  // Twice: the first time builds the rules, the second uses them.
  for (int i = 0; i < opaque(2); ++i) test::recurse_without_frame_pointer(3, [] { through_jit_code(*g_jit); });
  EXPECT_EQ(expect_captures_agree(true), 4);
  // The JIT frames are in the stacks: one, then two.
  const auto in_jit = [&](const Capture& c) {
    int n = 0;
    for (int f = 0; f < c.fast_n; ++f)
      n += reinterpret_cast<uintptr_t>(c.fast[f]) - reinterpret_cast<uintptr_t>(jit.page) < 4096;
    return n;
  };
  EXPECT_EQ(in_jit(g_captures[0]), 1);
  EXPECT_EQ(in_jit(g_captures[1]), 2);
}

__attribute__((noinline)) void through_cpython_trampoline(const JitCode& jit) {
  capture_both();
  jit.cpython(nullptr, nullptr, nullptr, capture_both);
  __asm__ volatile("" ::: "memory");
}

TEST_F(FastUnwind, UnwindsThroughCpythonsPerfTrampolineWhichLibunwindCannot) {
  // No frame pointer there, and no unwind table: libunwind's guess ends
  // the stack at it. The walk goes on to the frames a direct call has.
  const JitCode jit;
  ASSERT_NE(jit.cpython, nullptr);
  static const JitCode* g_jit = nullptr;
  g_jit = &jit;
  for (int i = 0; i < opaque(2); ++i) test::recurse_without_frame_pointer(3, [] { through_cpython_trampoline(*g_jit); });
  ASSERT_EQ(g_count, 4);
  for (int i = 1; i < 4; i += 2) {
    const Capture& direct = g_captures[i - 1];
    const Capture& through = g_captures[i];
    SCOPED_TRACE("capture " + std::to_string(i) + "\n" + side_by_side(through));
    EXPECT_EQ(through.by_fallback, 0u);
    ASSERT_EQ(through.fast_n, direct.fast_n + 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(through.fast[1]), reinterpret_cast<uintptr_t>(jit.page) + 128 + 6)
        << "the trampoline's return address";
    for (int f = 3; f < through.fast_n; ++f) EXPECT_EQ(through.fast[f], direct.fast[f - 1]) << "frame " << f;
  }
}

// A CPU sample's walk, from the signal's context: what unw_backtrace lists
// past the signal frame (from the interrupted instruction on), and what
// fast_backtrace_from_signal gives, with how it finished.
struct SignalCapture {
  int libunwind_n = 0, fast_n = 0;
  void* libunwind[kMaxFrames];
  void* fast[kMaxFrames];
  uint64_t by_rules = 0, by_libunwind = 0;
  bool missed = false;
};
SignalCapture g_signal;

void on_sample_like_signal(int, siginfo_t*, void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  void* all[kMaxFrames];
  const int n = unw_backtrace(all, kMaxFrames);
  void* const pc = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
  int first = 0;
  while (first < n && all[first] != pc) ++first;
  g_signal.libunwind_n = 0;
  for (int i = first; i < n; ++i) g_signal.libunwind[g_signal.libunwind_n++] = all[i];
  const FastUnwindCounters before = fast_unwind_counters();
  bool missed = false;
  g_signal.fast_n = fast_backtrace_from_signal(context, g_signal.fast, kMaxFrames, &missed);
  g_signal.missed = missed;
  const FastUnwindCounters after = fast_unwind_counters();
  g_signal.by_rules = after.signal_fast - before.signal_fast;
  g_signal.by_libunwind = after.signal_libunwind - before.signal_libunwind;
}

__attribute__((noinline)) void signal_this_thread() {
  syscall(SYS_tgkill, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), SIGUSR2);
  __asm__ volatile("" ::: "memory");
}

std::vector<void*> frames_of(void* const* frames, int n) { return std::vector<void*>(frames, frames + (n > 0 ? n : 0)); }

// The rules the signal walk needs, built outside the handler (a sample
// never builds one), as the thread's other captures would have.
void build_rules_for(const std::vector<void*>& frames) {
  const uint64_t epoch = g_unwind_epoch.load();
  for (size_t f = 1; f < frames.size(); ++f) cached_rule(reinterpret_cast<uint64_t>(frames[f]) - 1, epoch);
}

void with_sample_like_handler(void (*body)()) {
  struct sigaction sa {}, old {};
  sa.sa_sigaction = on_sample_like_signal;
  sa.sa_flags = SA_SIGINFO;
  ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
  body();
  sigaction(SIGUSR2, &old, nullptr);
}

TEST_F(FastUnwind, FromASignalContextGivesLibunwindsFramesAndTakesCachedRulesOnly) {
  with_sample_like_handler([] {
    SignalCapture rounds[2];
    for (int i = 0; i < opaque(2); ++i) {
      test::recurse_without_frame_pointer(3, signal_this_thread);
      rounds[i] = g_signal;
      // The first time the rules past the interrupted frame are not
      // cached (nor built in the handler): the walk notes the one it
      // missed, built here as the shim builds it after the handler; and
      // the rest, as the thread's other captures would have.
      if (i == 0) {
        build_missed_rules();
        build_rules_for(frames_of(g_signal.libunwind, g_signal.libunwind_n));
      }
    }
    const std::vector<void*> truth = frames_of(rounds[0].libunwind, rounds[0].libunwind_n);
    ASSERT_GT(truth.size(), 5u);
    EXPECT_EQ(frames_of(rounds[0].fast, rounds[0].fast_n), truth);
    EXPECT_EQ(rounds[0].by_libunwind, 1u) << "libunwind took over, with the same frames";
    EXPECT_TRUE(rounds[0].missed);
    EXPECT_FALSE(rounds[1].missed);
    EXPECT_EQ(frames_of(rounds[1].libunwind, rounds[1].libunwind_n), truth);
    EXPECT_EQ(frames_of(rounds[1].fast, rounds[1].fast_n), truth);
    EXPECT_EQ(rounds[1].by_rules, 1u);
    EXPECT_EQ(rounds[1].by_libunwind, 0u);
  });
}

// A thread the shim never primed (no known stack bounds: the rules cannot
// check their loads there): libunwind's cursor walks it all from the
// signal's context, with unw_backtrace's frames; never -1, which sent the
// sample to unw_backtrace in the handler.
TEST_F(FastUnwind, FromASignalContextOnAThreadNeverPrimedLibunwindWalksItAll) {
  with_sample_like_handler([] {
    std::thread([] { test::recurse_without_frame_pointer(3, signal_this_thread); }).join();
    const std::vector<void*> truth = frames_of(g_signal.libunwind, g_signal.libunwind_n);
    ASSERT_GT(truth.size(), 5u);
    EXPECT_EQ(frames_of(g_signal.fast, g_signal.fast_n), truth);
    EXPECT_EQ(g_signal.by_libunwind, 1u);
    EXPECT_EQ(g_signal.by_rules, 0u);
  });
}

// With the loader's lock half taken (a mutex put in that state stands
// for it: loader_lock.h), the walk that libunwind would take over (a
// thread never primed) gives the interrupted instruction alone and leaves
// libunwind out: its module listing would wait on that lock forever.
TEST_F(FastUnwind, FromASignalContextWithTheLoadersLockHalfTakenLibunwindIsLeftOut) {
  ASSERT_TRUE(find_loader_lock());
  const pthread_mutex_t* const real = loader_lock();
  pthread_mutex_t half = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
  half.__data.__lock = 1;  // taken, no owner yet
  set_loader_lock(&half);
  with_sample_like_handler([] {
    std::thread([] { test::recurse_without_frame_pointer(3, signal_this_thread); }).join();
  });
  set_loader_lock(real);
  ASSERT_GT(g_signal.libunwind_n, 5);
  EXPECT_EQ(g_signal.fast_n, 1);
  EXPECT_EQ(g_signal.fast[0], g_signal.libunwind[0]) << "the interrupted instruction";
  EXPECT_EQ(g_signal.by_libunwind, 0u);
  // Whole again: libunwind takes over as before.
  with_sample_like_handler([] {
    std::thread([] { test::recurse_without_frame_pointer(3, signal_this_thread); }).join();
  });
  EXPECT_EQ(g_signal.by_libunwind, 1u);
  EXPECT_EQ(frames_of(g_signal.fast, g_signal.fast_n), frames_of(g_signal.libunwind, g_signal.libunwind_n));
}

const JitCode* g_signal_jit = nullptr;
Capture g_beside_signal;

// Under the trampoline: an ordinary capture (which builds the rules from
// here out, the trampoline's too), then the signal.
void capture_then_signal() {
  capture_both();
  g_beside_signal = g_captures[g_count - 1];
  signal_this_thread();
  __asm__ volatile("" ::: "memory");  // a call, not a tail jump
}

__attribute__((noinline)) void signal_through_cpython_trampoline() {
  g_signal_jit->cpython(nullptr, nullptr, nullptr, capture_then_signal);
  __asm__ volatile("" ::: "memory");
}

TEST_F(FastUnwind, FromASignalContextThroughCpythonsPerfTrampoline) {
  // libunwind's list ends at the trampoline; the cached rules go past it,
  // to the frames an ordinary capture beside the signal has.
  const JitCode jit;
  ASSERT_NE(jit.cpython, nullptr);
  g_signal_jit = &jit;
  with_sample_like_handler([] {
    SignalCapture rounds[2];
    for (int i = 0; i < opaque(2); ++i) {
      test::recurse_without_frame_pointer(2, signal_through_cpython_trampoline);
      rounds[i] = g_signal;
      if (i == 0) build_rules_for(frames_of(g_signal.libunwind, g_signal.libunwind_n));
    }
    const SignalCapture& last = rounds[1];
    const std::vector<void*> through = frames_of(last.fast, last.fast_n);
    const std::vector<void*> beside = frames_of(g_beside_signal.fast, g_beside_signal.fast_n);
    EXPECT_EQ(last.by_rules, 1u);
    ASSERT_GE(beside.size(), 4u);
    // pc, signal_this_thread's return, capture_then_signal's, the
    // trampoline's...; beside it: capture_both's, capture_then_signal's,
    // the trampoline's...: the same from the trampoline on.
    ASSERT_EQ(through.size(), beside.size() + 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(through[3]), reinterpret_cast<uintptr_t>(g_signal_jit->page) + 128 + 6);
    for (size_t f = 3; f < through.size(); ++f) EXPECT_EQ(through[f], beside[f - 1]) << "frame " << f;
    EXPECT_LT(static_cast<size_t>(last.libunwind_n), through.size()) << "libunwind stops at the trampoline";
  });
}

TEST_F(FastUnwind, MatchesLibunwindThroughModuleCodeWithoutUnwindTablesWithoutFallingBack) {
  // libunwind makes the same guess where a module's .eh_frame covers no
  // entry for the address.
  for (int i = 0; i < opaque(2); ++i)
    test::recurse_without_frame_pointer(2, [] { test::recurse_without_unwind_table(3, capture_both); });
  EXPECT_EQ(expect_captures_agree(true), 2);
}

TEST_F(FastUnwind, AModuleLoadedAfterAGuessForCodeInNoModuleMakesRulesStale) {
  // A module may be loaded where code in no module was (a JIT's freed
  // pages): the rule guessed there would be wrong for it.
  const JitCode jit;
  ASSERT_NE(jit.calls_first, nullptr);
  const uint64_t generation = g_unwind_epoch.load() >> 16;
  const UnwindRule guess = describe_unwind_rule(reinterpret_cast<uintptr_t>(jit.calls_first) + 6, generation);
  EXPECT_EQ(guess.kind, UnwindRule::kFromRbp);
  EXPECT_EQ(guess.cfa_offset, 16);
  EXPECT_EQ(guess.ra_word, -1);
  EXPECT_EQ(guess.rbp_word, -2);
  modules_changed_since_last_check();  // from here
  EXPECT_FALSE(modules_changed_since_last_check());
  void* lib = dlopen(SPOOR_RELOAD_LIB_SMALL, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  EXPECT_TRUE(modules_changed_since_last_check());
  begin_module_unload();
  dlclose(lib);
  end_module_unload();
}

}  // namespace
}  // namespace spoor::preload
