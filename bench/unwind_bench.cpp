// spoor_bench_unwind: what one stack capture costs the preload shim, with
// libunwind's unw_backtrace (per-thread cache, as the shim configures it)
// and with the fast unwinder (preload/shim/fast_unwind.h), at 11 and 30
// frames. The capture runs at the bottom of a 40-deep recursion of -O2
// frames without frame pointers and stops at the depth limit, so every
// iteration walks exactly that many frames; all rules are cached after the
// first iteration, as they are for a program's hot allocation sites. The
// _Alternating cases capture from two call paths in turn (one frame
// deeper every other time), so consecutive stacks differ as they do in a
// program allocating from several places.
//
//   spoor_bench_unwind [Google Benchmark flags]
//
// The _Sample cases are a CPU sample's walk, in a signal handler: the
// thread signals itself (tgkill) at the bottom of the recursion and the
// handler walks as the shim's sampler does, with unw_backtrace through the
// kernel's signal frame, or with fast_backtrace_from_signal from the
// signal's context (libunwind steps out of the interrupted frame, the
// cached rules do the rest). The kernel's delivery and sigreturn are in
// both (~2.5 us on the machine of bench/RESULTS.md).
//
// Counter per_frame: time per iteration divided by the depth.
#define UNW_LOCAL_ONLY
#include <benchmark/benchmark.h>
#include <libunwind.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "fast_unwind.h"
#include "libdw_loader.h"

namespace {

constexpr int kRecursion = 40;

using Capture = int (*)(void**, int);

struct Run {
  benchmark::State* state;
  Capture capture;
  int depth;
  bool alternate;  // every other capture one frame deeper: the stacks differ
};

__attribute__((noinline)) int capture_here(Run& run, void** frames) {
  const int n = run.capture(frames, run.depth);
  __asm__ volatile("" ::: "memory");  // no tail call
  return n;
}
__attribute__((noinline)) int capture_one_deeper(Run& run, void** frames) {
  const int n = capture_here(run, frames);
  __asm__ volatile("" ::: "memory");
  return n;
}

__attribute__((noinline)) void measure(Run& run) {
  void* frames[64];
  int n = 0;
  if (!run.alternate) {
    for (auto _ : *run.state) {
      n = capture_here(run, frames);
      benchmark::DoNotOptimize(frames[n - 1]);
    }
  } else {
    bool deeper = false;
    for (auto _ : *run.state) {
      n = deeper ? capture_one_deeper(run, frames) : capture_here(run, frames);
      deeper = !deeper;
      benchmark::DoNotOptimize(frames[n - 1]);
    }
  }
  if (n != run.depth) run.state->SkipWithError("the stack was shallower than the depth asked for");
}

__attribute__((noinline)) void recurse(int left, Run& run) {
  if (left == 0) measure(run);
  else recurse(left - 1, run);
  __asm__ volatile("" ::: "memory");  // no tail call: every level keeps its frame
}

void run_case(benchmark::State& state, Capture capture, bool alternate = false) {
  Run run{&state, capture, static_cast<int>(state.range(0)), alternate};
  recurse(kRecursion, run);
  // Seconds per frame (printed with an SI prefix: 3.1n is 3.1 ns).
  state.counters["per_frame"] = benchmark::Counter(static_cast<double>(run.depth),
                                                   benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
}

void BM_UnwBacktrace(benchmark::State& state) { run_case(state, unw_backtrace); }
int fast_capture(void** frames, int max) { return spoor::preload::fast_backtrace(frames, max); }

void BM_FastBacktrace(benchmark::State& state) { run_case(state, fast_capture); }
void BM_UnwBacktrace_Alternating(benchmark::State& state) { run_case(state, unw_backtrace, true); }
void BM_FastBacktrace_Alternating(benchmark::State& state) {
  run_case(state, fast_capture, true);
}

// The sample cases: the depth asked of unw_backtrace covers the handler's
// own frames too, which it lists (the shim asks for 16 more).
int g_sample_depth = 0;
int g_sample_frames = 0;

int from_signal(const void* context, void** frames, int max) {
  bool missed = false;
  return spoor::preload::fast_backtrace_from_signal(context, frames, max, &missed);
}
bool g_from_context = false;

void on_sample(int, siginfo_t*, void* context) {
  void* frames[96];
  g_sample_frames = g_from_context ? from_signal(context, frames, g_sample_depth)
                                   : unw_backtrace(frames, g_sample_depth + 4);
  benchmark::DoNotOptimize(frames[0]);
}

int signal_self(void**, int) {
  static const pid_t pid = getpid();
  static const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
  syscall(SYS_tgkill, pid, tid, SIGUSR2);
  // As the shim does at the thread's next way out of its hooks: the rules
  // a sample's walk missed.
  if (g_from_context) spoor::preload::build_missed_rules();
  return g_sample_depth;
}

void run_sample_case(benchmark::State& state, bool from_context) {
  struct sigaction sa {}, old {};
  sa.sa_sigaction = on_sample;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR2, &sa, &old);
  g_from_context = from_context;
  g_sample_depth = static_cast<int>(state.range(0));
  const spoor::preload::FastUnwindCounters before = spoor::preload::fast_unwind_counters();
  run_case(state, signal_self);
  const spoor::preload::FastUnwindCounters after = spoor::preload::fast_unwind_counters();
  sigaction(SIGUSR2, &old, nullptr);
  // The share of the walks the cached rules finished (the rest: libunwind).
  if (from_context)
    state.counters["by_rules"] = static_cast<double>(after.signal_fast - before.signal_fast) /
                                 static_cast<double>(std::max<uint64_t>(1, state.iterations()));
  if (g_sample_frames < g_sample_depth) state.SkipWithError("the sample's stack was shallower than asked");
}

void BM_UnwBacktrace_Sample(benchmark::State& state) { run_sample_case(state, false); }
void BM_FromSignal_Sample(benchmark::State& state) { run_sample_case(state, true); }

BENCHMARK(BM_UnwBacktrace)->Arg(11)->Arg(30);
BENCHMARK(BM_FastBacktrace)->Arg(11)->Arg(30);
BENCHMARK(BM_UnwBacktrace_Alternating)->Arg(11)->Arg(30);
BENCHMARK(BM_FastBacktrace_Alternating)->Arg(11)->Arg(30);
BENCHMARK(BM_UnwBacktrace_Sample)->Arg(11)->Arg(30);
BENCHMARK(BM_FromSignal_Sample)->Arg(11)->Arg(30);

}  // namespace

int main(int argc, char** argv) {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  if (!spoor::preload::init_fast_unwind()) return 1;
  if (spoor::preload::load_libdw_now() == nullptr) return 1;  // the rules' reader, as a shim has it once loaded
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
