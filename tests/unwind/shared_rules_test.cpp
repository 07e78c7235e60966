// The recording's shared store of unwind rules (preload/shared_rules.h,
// preload/shim/shared_rule_store.h): what one process publishes another
// finds, by module build ID and offset, never another module's; and the
// fast unwinder takes a rule from it instead of building one, in a process
// that loaded the module elsewhere. Its own binary: a store, once
// attached, stays for the process's life.
#include <dlfcn.h>
#include <link.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <sys/wait.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <set>

#include "../../preload/shared_rules.h"
#include "fast_unwind.h"
#include "build_id.h"
#include "libdw_loader.h"
#include "rule_cache.h"
#include "shared_rule_store.h"
#include "unwind_rule.h"

extern "C" void spoor_test_reload_call(void (*leaf)());

namespace spoor::preload {
namespace {

// A store in shared anonymous memory: fork children write into the same
// pages, as traced processes do into the recorder's memfd.
void* make_store() {
  void* p = mmap(nullptr, shared_rules_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  init_shared_rules(p);
  return p;
}

void* store() {
  static void* const memory = [] {
    void* p = make_store();
    if (p != nullptr && !attach_shared_rules_at(p, shared_rules_bytes())) p = nullptr;
    return p;
  }();
  return memory;
}

class SharedRules : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(store(), nullptr); }
};

uint64_t key_of(const char* id) {
  return shared_rule_module_key(reinterpret_cast<const uint8_t*>(id), static_cast<uint32_t>(std::strlen(id)));
}

TEST_F(SharedRules, ModuleKeysFollowTheWholeBuildId) {
  EXPECT_EQ(key_of("0123456789abcdef0123"), key_of("0123456789abcdef0123"));
  EXPECT_NE(key_of("0123456789abcdef0123"), key_of("0123456789abcdef0124")) << "the last byte";
  EXPECT_NE(key_of("0123456789abcdef0123"), key_of("1123456789abcdef0123")) << "the first byte";
  EXPECT_NE(key_of("0123456789abcdef"), key_of("0123456789abcdef0000")) << "the length";
  EXPECT_EQ(shared_rule_module_key(nullptr, 0), 0u) << "no build ID: not shared";
  std::set<uint64_t> keys;
  for (uint32_t i = 0; i < 10000; ++i) {
    const uint64_t k = shared_rule_module_key(reinterpret_cast<const uint8_t*>(&i), sizeof i);
    EXPECT_GT(k, kSharedRuleClaimed) << "0 and 1 mark free and claimed slots";
    keys.insert(k);
  }
  EXPECT_EQ(keys.size(), 10000u);
}

TEST_F(SharedRules, FindsWhatWasPublishedAndNothingElse) {
  const uint64_t a = key_of("module a"), b = key_of("module b");
  publish_shared_rule(a, 0x1234, 0xAAAA);
  publish_shared_rule(a, 0x1235, 0xBBBB);
  EXPECT_EQ(find_shared_rule(a, 0x1234), 0xAAAAu);
  EXPECT_EQ(find_shared_rule(a, 0x1235), 0xBBBBu);
  EXPECT_EQ(find_shared_rule(a, 0x1236), 0u) << "another offset";
  EXPECT_EQ(find_shared_rule(b, 0x1234), 0u) << "another module at the same offset";
  publish_shared_rule(a, 0x1234, 0xAAAA);  // again: no second copy needed, no harm
  EXPECT_EQ(find_shared_rule(a, 0x1234), 0xAAAAu);
  publish_shared_rule(a, 0x9999, 0);  // 0 is no rule: not kept
  EXPECT_EQ(find_shared_rule(a, 0x9999), 0u);
}

TEST_F(SharedRules, AFullProbeWindowDropsTheNewRuleAndKeepsTheOthers) {
  // A rule per byte of one 256-byte run of code: more than the slots near
  // that code's place in the store (two buckets of 64) hold.
  const uint64_t m = key_of("dense module");
  for (uint64_t off = 0; off < 256; ++off) publish_shared_rule(m, 0x40000 + off, 0x100 + off);
  int first = 0, found = 0, wrong = 0;
  for (uint64_t off = 0; off < 256; ++off) {
    const uint64_t rule = find_shared_rule(m, 0x40000 + off);
    found += rule != 0;
    wrong += rule != 0 && rule != 0x100 + off;
    first += off < 64 && rule == 0x100 + off;
  }
  EXPECT_EQ(first, 64) << "the rules published first stay";
  EXPECT_LT(found, 256) << "more rules than the window holds were kept";
  EXPECT_EQ(wrong, 0);
}

// Children publish at once into the store; every rule each published is
// found afterwards, whole, by the parent.
TEST_F(SharedRules, ProcessesPublishingAtOnceLoseAndMixNothing) {
  constexpr int kChildren = 4;
  constexpr uint64_t kRules = 1000;
  const char* const names[kChildren] = {"child 0", "child 1", "child 2", "child 3"};
  pid_t children[kChildren];
  for (int c = 0; c < kChildren; ++c) {
    children[c] = fork();
    if (children[c] == 0) {
      // Half the rules are every child's (the same module and offsets, as
      // siblings running the same code build), half the child's own; a
      // return address every 256 bytes of code, a busy call graph.
      const uint64_t own = key_of(names[c]);
      for (uint64_t i = 0; i < kRules; ++i) {
        publish_shared_rule(key_of("common"), i * 256, 0x5000 + i);
        publish_shared_rule(own, i * 256, (uint64_t{7} << 32) + i);
      }
      _exit(0);
    }
    ASSERT_GT(children[c], 0);
  }
  for (const pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int c = 0; c < kChildren; ++c) {
    const uint64_t own = key_of(names[c]);
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < kRules; ++i) wrong += find_shared_rule(own, i * 256) != (uint64_t{7} << 32) + i;
    EXPECT_EQ(wrong, 0u) << "child " << c;
  }
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < kRules; ++i) wrong += find_shared_rule(key_of("common"), i * 256) != 0x5000 + i;
  EXPECT_EQ(wrong, 0u);
}

// What one child learned about a library, reported to the parent.
struct ChildReport {
  uintptr_t library_at;
  uint64_t built, from_store;  // the fast unwinder's counters over one capture
  uint64_t not_kept;
  bool agrees;                 // its frames are libunwind's
  bool fast;                   // without falling back
};

ChildReport g_report;

__attribute__((noinline)) void capture_and_compare() {
  void* fast[64];
  void* slow[64];
  const FastUnwindCounters before = fast_unwind_counters();
  const int n = fast_backtrace(fast, 64);
  const FastUnwindCounters after = fast_unwind_counters();
  const int m = unw_backtrace(slow, 64);
  bool same = n == m && n > 2;
  for (int f = 1; same && f < n; ++f) same = fast[f] == slow[f];  // frame 0: two call sites here
  g_report.agrees = same;
  g_report.fast = after.fast - before.fast == 1;
  g_report.built = after.rules_built - before.rules_built;
  g_report.from_store = after.rules_from_store - before.rules_from_store;
  g_report.not_kept = after.rules_not_kept - before.rules_not_kept;
}

using ReloadCall = decltype(&spoor_test_reload_call);

// Loads `library` and finds its function; with the page at `taken` mapped
// first, so that it lands elsewhere than where another child loaded it.
// nullptr when it does not load.
ReloadCall load_away_from(const char* library, uintptr_t taken) {
  if (taken != 0)
    mmap(reinterpret_cast<void*>(taken & ~uintptr_t{0xFFF}), 0x1000, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  return handle == nullptr ? nullptr : reinterpret_cast<ReloadCall>(dlsym(handle, "spoor_test_reload_call"));
}

// Runs `body` in a fork child, which writes a Report to the pipe it is
// given; returns that report (zeroed when the child wrote none).
template <class Report, class Body>
Report report_of_child(Body body) {
  Report report{};
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return report;
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    body(pipe_fds[1]);
    _exit(0);
  }
  close(pipe_fds[1]);
  if (child > 0) {
    if (read(pipe_fds[0], &report, sizeof report) != static_cast<ssize_t>(sizeof report)) report = Report{};
    waitpid(child, nullptr, 0);
  }
  close(pipe_fds[0]);
  return report;
}

// In a fork child: loads `library` (away from `taken`), captures through
// its function, and writes what happened to `out`.
__attribute__((noinline)) void load_and_capture(const char* library, uintptr_t taken, int out) {
  g_report = {};
  const ReloadCall call = load_away_from(library, taken);
  if (call != nullptr) {
    g_report.library_at = reinterpret_cast<uintptr_t>(call);
    call(capture_and_compare);
  }
  (void)!write(out, &g_report, sizeof g_report);
}

// Three children in turn, from one call site (so that the test's own
// frames are the same code in each): the first loads SMALL and builds its
// rules; the second loads SMALL at another address and must take every
// rule from the store; the third loads LARGE, whose code has SMALL's
// offsets and another frame size, and must build that frame's rule, not
// take SMALL's.
TEST_F(SharedRules, AProcessThatLoadsAModuleElsewhereTakesTheRulesAnotherBuiltForIt) {
  ASSERT_TRUE(init_fast_unwind());
  ASSERT_NE(load_libdw_now(), nullptr);  // the rules, not the lazy load, are tested here
  const char* const libraries[] = {SPOOR_RELOAD_LIB_SMALL, SPOOR_RELOAD_LIB_SMALL, SPOOR_RELOAD_LIB_LARGE};
  ChildReport reports[3] = {};
  for (int i = 0; i < 3; ++i) {
    const uintptr_t taken = i == 1 ? reports[0].library_at : 0;
    reports[i] = report_of_child<ChildReport>([&](int out) { load_and_capture(libraries[i], taken, out); });
  }
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("child " + std::to_string(i));
    ASSERT_NE(reports[i].library_at, 0u) << "the library did not load";
    EXPECT_TRUE(reports[i].agrees) << "frames differ from libunwind's";
    EXPECT_TRUE(reports[i].fast) << "fell back to libunwind";
  }
  EXPECT_GT(reports[0].built - reports[0].from_store, 0u) << "the first child read no module's tables";
  EXPECT_NE(reports[1].library_at, reports[0].library_at) << "the second child loaded SMALL where the first did";
  EXPECT_GT(reports[1].from_store, 0u);
  EXPECT_EQ(reports[1].built, reports[1].from_store) << "the second child built rules the first had published";
  EXPECT_GE(reports[2].built - reports[2].from_store, 1u) << "LARGE's frame took SMALL's rule";
}

// A fork child's rule cache is its parent's pages: the rules it finds in
// the store are used, not copied in (a page copied each), for its first
// misses; a process that is no fork child keeps every one.
TEST_F(SharedRules, AForkChildUsesTheStoresRulesWithoutCopyingThemIntoItsCache) {
  ASSERT_TRUE(init_fast_unwind());
  ASSERT_NE(load_libdw_now(), nullptr);
  ChildReport first = report_of_child<ChildReport>([](int out) { load_and_capture(SPOOR_RELOAD_LIB_SMALL, 0, out); });
  ASSERT_NE(first.library_at, 0u) << "the library did not load";
  ChildReport second = report_of_child<ChildReport>(
      [&](int out) { load_and_capture(SPOOR_RELOAD_LIB_SMALL, first.library_at, out); });
  ASSERT_NE(second.library_at, 0u) << "the library did not load";
  EXPECT_TRUE(second.agrees && second.fast);
  EXPECT_GT(second.from_store, 0u);
  EXPECT_EQ(second.not_kept, second.from_store) << "the fork child copied store rules into its cache";
  // This process is no fork child: what it takes from the store it keeps.
  g_report = {};
  const ReloadCall call = load_away_from(SPOOR_RELOAD_LIB_SMALL, second.library_at);
  ASSERT_NE(call, nullptr);
  call(capture_and_compare);
  EXPECT_TRUE(g_report.agrees && g_report.fast);
  EXPECT_GT(g_report.from_store, 0u);
  EXPECT_EQ(g_report.not_kept, 0u);
}

// A CPU sample's walk in a process whose own cache lacks the rules (the
// handler may not build one, nor take the lock): what the walk gave, how
// it finished, and libunwind's frames for the same context.
struct SignalReport {
  uintptr_t library_at;
  uint64_t by_rules, by_libunwind;
  bool agrees;
};
SignalReport g_signal_report;
void* g_signal_truth[64];
int g_signal_truth_n = 0;

void on_sample_like_signal(int, siginfo_t*, void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  void* all[64];
  const int n = unw_backtrace(all, 64);
  void* const pc = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
  int first = 0;
  while (first < n && all[first] != pc) ++first;
  g_signal_truth_n = 0;
  for (int i = first; i < n; ++i) g_signal_truth[g_signal_truth_n++] = all[i];
  void* fast[64];
  bool missed = false;
  const FastUnwindCounters before = fast_unwind_counters();
  const int fast_n = fast_backtrace_from_signal(context, fast, 64, &missed);
  const FastUnwindCounters after = fast_unwind_counters();
  g_signal_report.by_rules = after.signal_fast - before.signal_fast;
  g_signal_report.by_libunwind = after.signal_libunwind - before.signal_libunwind;
  bool same = fast_n == g_signal_truth_n && fast_n > 3;
  for (int f = 0; same && f < fast_n; ++f) same = fast[f] == g_signal_truth[f];
  g_signal_report.agrees = same;
}

__attribute__((noinline)) void signal_this_thread() {
  syscall(SYS_tgkill, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), SIGUSR2);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void capture_elsewhere() {
  void* frames[64];
  fast_backtrace(frames, 64);
  __asm__ volatile("" ::: "memory");
}

// In a fork child: loads SMALL (away from `taken`), lets the unwinder
// meet its modules without caching the rules the sample's walk will need
// (a capture from another call site; the rule at the library function's
// first byte), takes a sample-like signal inside the library's call, then
// builds what the walk missed, as the shim does after a handler.
__attribute__((noinline)) void sample_in_library(uintptr_t taken, int out) {
  g_signal_report = {};
  const ReloadCall call = load_away_from(SPOOR_RELOAD_LIB_SMALL, taken);
  if (call != nullptr) {
    g_signal_report.library_at = reinterpret_cast<uintptr_t>(call);
    capture_elsewhere();
    cached_rule(reinterpret_cast<uint64_t>(call), g_unwind_epoch.load());
    struct sigaction sa {};
    sa.sa_sigaction = on_sample_like_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, nullptr);
    call(signal_this_thread);
    build_missed_rules();
    const uint64_t epoch = g_unwind_epoch.load();
    for (int f = 1; f < g_signal_truth_n; ++f) cached_rule(reinterpret_cast<uint64_t>(g_signal_truth[f]) - 1, epoch);
  }
  (void)!write(out, &g_signal_report, sizeof g_signal_report);
}

// The first child's sample falls back to libunwind (its rules are built
// afterwards, and published); the second child's, with the library loaded
// elsewhere, is walked by rules from the store alone.
TEST_F(SharedRules, ASamplesWalkTakesRulesFromTheStoreWithoutBuildingAny) {
  ASSERT_TRUE(init_fast_unwind());
  ASSERT_NE(load_libdw_now(), nullptr);  // the rules, not the lazy load, are tested here
  SignalReport reports[2] = {};
  for (int i = 0; i < 2; ++i) {
    const uintptr_t taken = i == 1 ? reports[0].library_at : 0;
    reports[i] = report_of_child<SignalReport>([&](int out) { sample_in_library(taken, out); });
  }
  ASSERT_NE(reports[0].library_at, 0u) << "the library did not load";
  EXPECT_NE(reports[1].library_at, reports[0].library_at);
  EXPECT_TRUE(reports[0].agrees);
  EXPECT_EQ(reports[0].by_libunwind, 1u) << "the first sample found rules nobody had built";
  EXPECT_TRUE(reports[1].agrees) << "the second sample's frames differ from libunwind's";
  EXPECT_EQ(reports[1].by_rules, 1u);
  EXPECT_EQ(reports[1].by_libunwind, 0u) << "the second sample did not find the published rules";
}

// The key and bias of the module holding `address`.
struct ModuleOf {
  uintptr_t address;
  uint64_t key;
  uintptr_t bias;
};
int find_module_of(dl_phdr_info* info, size_t, void* context) {
  auto* m = static_cast<ModuleOf*>(context);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type != PT_LOAD || m->address < start || m->address >= start + ph.p_memsz) continue;
    const uint8_t* id = nullptr;
    const uint32_t size = build_id_in_memory(info, &id);
    m->key = shared_rule_module_key(id, size);
    m->bias = info->dlpi_addr;
    return 1;
  }
  return 0;
}

// A store another process wrote nonsense into (CFA rules that would send
// the walk below the stack pointer, kinds that do not exist) for every
// offset of the function a capture goes through: the unwinder builds that
// frame's rule itself and its frames stay libunwind's.
TEST_F(SharedRules, ARuleThatBreaksTheWalksInvariantsIsNotTaken) {
  ASSERT_TRUE(init_fast_unwind());
  ASSERT_NE(load_libdw_now(), nullptr);  // the rules, not the lazy load, are tested here
  const pid_t child = fork();
  if (child == 0) {
    void* own = make_store();  // this child's alone: the others' tests keep theirs clean
    if (own == nullptr || !attach_shared_rules_at(own, shared_rules_bytes())) _exit(10);
    const ReloadCall call = load_away_from(SPOOR_RELOAD_LIB_SMALL, 0);
    if (call == nullptr) _exit(11);
    ModuleOf m{reinterpret_cast<uintptr_t>(call), 0, 0};
    dl_iterate_phdr(find_module_of, &m);
    if (m.key == 0) _exit(12);
    UnwindRule below{};
    below.kind = UnwindRule::kFromRsp;
    below.ra_word = -1;
    below.lowest_word = -1;
    below.cfa_offset = -64;
    UnwindRule no_kind = below;
    no_kind.kind = static_cast<UnwindRule::Kind>(9);
    no_kind.cfa_offset = 16;
    for (uintptr_t at = m.address - m.bias; at < m.address - m.bias + 256; ++at)
      publish_shared_rule(m.key, at, std::bit_cast<uint64_t>(at % 2 ? below : no_kind));
    g_report = {};
    call(capture_and_compare);
    if (!g_report.agrees) _exit(1);
    if (!g_report.fast) _exit(2);
    if (g_report.built - g_report.from_store < 1) _exit(3);  // the frame's rule was built, not taken
    _exit(0);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died: signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: frames differ from libunwind's; 2: fell back; 3: a bad rule was taken; "
                                       "10-12: setup failed";
}

}  // namespace
}  // namespace spoor::preload
