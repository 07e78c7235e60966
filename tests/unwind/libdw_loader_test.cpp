// libdw loaded when the first rule needs it, from a moment where entering
// the dynamic loader is safe (libdw_loader.h). Each case runs in a fork
// child of its own: a process loads libdw once.
#include "libdw_loader.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <libunwind.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cstdint>

#include "fast_unwind.h"
#include "unwind_rule.h"

namespace spoor::preload {
namespace {

constexpr int kMaxFrames = 64;
// A walk cut after its first frame, the function that walked (walk_here
// tail-calls unw_backtrace): its callers are beyond the cut.
constexpr int kCutFrames = 1;

// Runs `body` in a fork child; its exit code: 0 when every check held,
// else the number of the first that failed.
template <typename Body>
int in_child(Body body) {
  const pid_t child = fork();
  if (child == 0) _exit(body());
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// This thread's stack as libunwind walks it from here: what a capture that
// fell back hands the loader.
__attribute__((noinline)) int walk_here(void** frames) { return unw_backtrace(frames, kMaxFrames); }

// A complete walk from here handed to the loader, as a capture that fell
// back to libunwind does: whether it loaded libdw.
bool loads_after_a_walk_here() {
  void* frames[kMaxFrames];
  const int n = walk_here(frames);
  return load_libdw_after_walk(frames, n, n < kMaxFrames);
}

// A rule libdw reads for a code address of this test: not the "no rule
// at hand" a rule gets while libdw is not loaded.
bool reads_rules() {
  const auto address = reinterpret_cast<uintptr_t>(&walk_here) + 1;
  return describe_unwind_rule(address, 0).kind != UnwindRule::kNone;
}

TEST(LibdwLoader, IsLoadedAfterAWalkOnlyOnceARuleAskedForIt) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              if (libdw() != nullptr) return 2;
              if (reads_rules()) return 3;  // asks for libdw
              void* frames[kMaxFrames];
              const int n = walk_here(frames);
              if (n >= kMaxFrames) return 4;
              if (!load_libdw_after_walk(frames, n, true) || libdw() == nullptr) return 5;
              return reads_rules() ? 0 : 6;
            }),
            0);
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              // Nothing asked for it: the walk does not load it.
              return !loads_after_a_walk_here() && libdw() == nullptr ? 0 : 2;
            }),
            0);
}

TEST(LibdwLoader, IsNotLoadedFromAWalkThroughTheDynamicLoader) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              want_libdw();
              void* frames[kMaxFrames];
              const int n = walk_here(frames);
              // ld.so's code between this frame and the caller's: the loader
              // calling malloc mid-dlopen.
              void* through_loader[kMaxFrames + 1] = {frames[0],
                                                      reinterpret_cast<void*>(getauxval(AT_BASE) + 0x1000)};
              for (int i = 1; i < n && i < kMaxFrames; ++i) through_loader[i + 1] = frames[i];
              if (load_libdw_after_walk(through_loader, n + 1, true) || libdw() != nullptr) return 2;
              // The same walk without it loads: the loader's frame was the reason.
              return load_libdw_after_walk(frames, n, true) && libdw() != nullptr ? 0 : 3;
            }),
            0);
}

// A capture cut at its frame limit (a small --stack-depth, deep recursion)
// loads it too, once the stack beyond the cut is walked and found clear:
// otherwise a process whose captures are all cut never loads it.
TEST(LibdwLoader, IsLoadedFromAWalkCutAtItsFrameLimitOnceTheStackBeyondIsClear) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              want_libdw();
              void* frames[kMaxFrames];
              if (walk_here(frames) <= kCutFrames) return 2;
              return load_libdw_after_walk(frames, kCutFrames, false) && libdw() != nullptr ? 0 : 3;
            }),
            0);
}

int g_refused_in_constructor = -1;

}  // namespace
}  // namespace spoor::preload

// Called by spoor_test_constructor_callback's constructor, under dlopen.
extern "C" __attribute__((visibility("default"), noinline)) void spoor_test_in_constructor() {
  using namespace spoor::preload;
  void* frames[kMaxFrames];
  const int n = walk_here(frames);
  g_refused_in_constructor =
      n > kCutFrames && !load_libdw_after_walk(frames, kCutFrames, false) && libdw() == nullptr;
}

namespace spoor::preload {
namespace {

TEST(LibdwLoader, IsNotLoadedFromACutWalkWithTheLoaderBeyondTheCut) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              want_libdw();
              void* library = dlopen(SPOOR_CONSTRUCTOR_CALLBACK_LIB, RTLD_NOW | RTLD_LOCAL);
              if (library == nullptr) return 2;
              if (g_refused_in_constructor != 1) return 3;
              return loads_after_a_walk_here() ? 0 : 4;
            }),
            0);
}

int g_refused_in_handler = -1;

int g_cut_refused_in_handler = -1;

void capture_in_handler(int) {
  void* frames[kMaxFrames];
  const int n = walk_here(frames);
  // Cut before the signal frame: the walk beyond the cut finds it.
  g_cut_refused_in_handler =
      n > kCutFrames && !load_libdw_after_walk(frames, kCutFrames, false) && libdw() == nullptr;
  g_refused_in_handler = n < kMaxFrames && !load_libdw_after_walk(frames, n, true) && libdw() == nullptr;
}

TEST(LibdwLoader, IsNotLoadedFromASignalHandler) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              want_libdw();
              struct sigaction action{};
              action.sa_handler = capture_in_handler;
              if (sigaction(SIGUSR1, &action, nullptr) != 0) return 2;
              raise(SIGUSR1);
              // The handler's walk crossed the signal frame (the interrupted
              // code may be the loader's).
              if (g_refused_in_handler != 1) return 3;
              if (g_cut_refused_in_handler != 1) return 4;
              return loads_after_a_walk_here() ? 0 : 5;
            }),
            0);
}

bool g_sample_missed = false;

void sample_in_handler(int, siginfo_t*, void* context) {
  void* frames[kMaxFrames];
  fast_backtrace_from_signal(context, frames, kMaxFrames, &g_sample_missed);
}

// A CPU sample lands on arbitrary instructions: the rules it missed are
// built later if libdw is there, and never make a process load it.
TEST(LibdwLoader, IsNotAskedForByTheRulesASampleMissed) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              struct sigaction action{};
              action.sa_sigaction = sample_in_handler;
              action.sa_flags = SA_SIGINFO;
              if (sigaction(SIGUSR1, &action, nullptr) != 0) return 2;
              raise(SIGUSR1);
              if (!g_sample_missed) return 3;  // nothing to build: the case does not arise
              build_missed_rules();
              return !loads_after_a_walk_here() && libdw() == nullptr ? 0 : 4;
            }),
            0);
}

TEST(LibdwLoader, IsNotLoadedByAVforkChildIntoItsParentsMemory) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              want_libdw();
              const pid_t child = vfork();
              if (child == 0) _exit(loads_after_a_walk_here() ? 1 : 0);
              int status = 0;
              if (child < 0 || waitpid(child, &status, 0) != child) return 2;
              if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || libdw() != nullptr) return 3;
              return loads_after_a_walk_here() ? 0 : 4;
            }),
            0);
}

TEST(LibdwLoader, IsLoadedBeforeTheFirstThreadStarts) {
  EXPECT_EQ(in_child([] {
              if (!init_fast_unwind()) return 1;
              prepare_unwinder_for_threads();
              return libdw() != nullptr && reads_rules() ? 0 : 2;
            }),
            0);
  // Threads started before the unwinder was set up (a library's
  // constructor, before the shim's): loaded as it is set up.
  EXPECT_EQ(in_child([] {
              prepare_unwinder_for_threads();
              if (libdw() != nullptr) return 1;
              if (!init_fast_unwind()) return 2;
              return libdw() != nullptr ? 0 : 3;
            }),
            0);
}

}  // namespace
}  // namespace spoor::preload
