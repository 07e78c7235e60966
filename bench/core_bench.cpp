// spoor_bench_core: the cost of one event, Spoor beside LTTng-UST in one run.
//
//   BM_Spoor_Enabled3Fields   uint32 a, uint32 b, a 5-byte string; session on;
//                             kFitIterations per thread, which the ring holds,
//                             with the session's drainer asleep until stop():
//                             the write path itself, with no drops, and its
//                             scaling with threads (on this 2-CPU VM a live
//                             drainer would take one of the writers' CPUs)
//   BM_Spoor_Enabled3Fields_LiveDrain
//                             the same with the drainer running as usual
//                             (every millisecond), sharing the CPUs
//   BM_Spoor_Enabled3Fields_Saturated
//                             the same, free-running for Google Benchmark's
//                             min time: the writers outrun the drainer and
//                             the `lost` counters show by how much
//   BM_Spoor_Disabled         the same event, session on, its provider off
//   BM_Floor_TickRead         spoor_port_ticks() alone (rdtsc on x86-64):
//                             the least any timestamped event costs here
//   BM_LttngUst_3Fields       tracepoint() with the same fields (enabled only
//                             while an LTTng session enables spoor_bench:*),
//                             kFitIterations per thread as Spoor's
//   BM_LttngUst_Disabled      a tracepoint no session enables
//
// Run it through bench/run.sh, which starts the LTTng session and asks for
// medians over repetitions. Every case uses real (wall) time, so with
// Threads(2) items_per_second is the aggregate throughput of both threads;
// the cpu column is the threads' own CPU time, which stays honest when other
// processes share the machine.
//
// Google Benchmark calls a case's function several times (to size the
// iteration count, then once per repetition) and calls Setup/Teardown around
// each call. Setup starts one Spoor session (one per process at a time) and
// it stays up for every iteration of that call; thread 0 stops it after the
// loop (the loop's end is a barrier: every thread is done writing) so the
// call can report the session's own counts: `lost` and `lost_pct` (events
// the ring dropped because the drainer fell behind), `file_events` and
// `bytes_per_event` (trace file size over events in it).
//
// Environment: SPOOR_BENCH_DIR (where trace files go, default /tmp),
// SPOOR_BENCH_BUFFER_MB (ring per CPU for the enabled cases, default 128:
// one thread's kFitIterations records fit in one CPU's ring),
// SPOOR_BENCH_DRAIN_US (the session's drain_interval_us; default the
// SessionOptions default. A large value keeps the drainer asleep through a
// kFitIterations run, which isolates the writers' own cost on a machine with
// fewer CPUs than writers plus drainer).
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "spoor/event.h"
#include "spoor/host/session.h"
#include "spoor/port.h"

#if SPOOR_BENCH_HAVE_LTTNG
#include "lttng_tp.h"
#include "lttng_tp_off.h"
#endif

namespace {

SPOOR_DEFINE_PROVIDER(g_bench, "Spoor.Bench");

SPOOR_EVENT(kThreeFields, g_bench,
            (spoor::EventInfo{.name = "ThreeFields", .id = 1, .level = spoor::Level::info}),
            spoor::Field<uint32_t>{"a"}, spoor::Field<uint32_t>{"b"}, spoor::Field<spoor::Str>{"s"});

constexpr const char* kFiveChars = "hello";

// 4M records of 24 bytes (10-byte header, 4 + 4 + 1 + 5 bytes of fields) are
// about 92 MiB: one CPU's 128 MiB ring holds a thread's run with the drainer
// asleep. Two threads on the two CPUs of this VM fill one ring each.
constexpr benchmark::IterationCount kFitIterations = 4'000'000;

// ---------------------------------------------------------------------------
// The session each Spoor case runs under.
// ---------------------------------------------------------------------------

std::unique_ptr<spoor::host::Session> g_session;
std::string g_session_error;

std::string bench_dir() {
  const char* dir = std::getenv("SPOOR_BENCH_DIR");
  return dir && *dir ? dir : "/tmp";
}

size_t buffer_bytes_per_cpu() {
  const char* mb = std::getenv("SPOOR_BENCH_BUFFER_MB");
  const unsigned long n = mb && *mb ? std::strtoul(mb, nullptr, 10) : 128;
  return static_cast<size_t>(n > 0 ? n : 128) << 20;
}

// Drain interval that keeps the drainer asleep through a kFitIterations run;
// stop() still drains every record.
constexpr uint32_t kDeferredDrainUs = 30'000'000;

void start_session(const char* tag, const char* providers, int threads, uint32_t drain_us = 0) {
  g_session_error.clear();
  spoor::host::SessionOptions options;
  options.output_path = bench_dir() + "/spoor_bench_" + tag + "_t" + std::to_string(threads) + ".spoor";
  options.providers = providers;
  options.buffer_bytes_per_cpu = buffer_bytes_per_cpu();
  if (drain_us != 0) {
    options.drain_interval_us = drain_us;
    options.flush_interval_ms = drain_us / 1000;
  }
  if (const char* us = std::getenv("SPOOR_BENCH_DRAIN_US"); us && *us)
    options.drain_interval_us = static_cast<uint32_t>(std::strtoul(us, nullptr, 10));
  g_session = spoor::host::Session::start(options, &g_session_error);
  if (!g_session && g_session_error.empty()) g_session_error = "cannot start the session";
}

// Spoor.Bench on, at every level; the drainer deferred or live.
void setup_enabled(const benchmark::State& state) {
  start_session("enabled", "Spoor.Bench", state.threads(), kDeferredDrainUs);
}
void setup_enabled_live(const benchmark::State& state) {
  start_session("enabled_live", "Spoor.Bench", state.threads());
}
// A session runs, but its rules match no provider of this program: the
// event's provider is registered and disabled, the state a production
// binary is in when nobody traces it.
void setup_disabled(const benchmark::State& state) {
  start_session("disabled", "Spoor.Bench.NotThisOne", state.threads());
}
void teardown_session(const benchmark::State&) { g_session.reset(); }

// Thread 0, after the loop: stop the session and report its counts.
void report_session(benchmark::State& state) {
  if (state.thread_index() != 0 || !g_session) return;
  const spoor::host::SessionStats stats = g_session->stop();
  const double written = static_cast<double>(stats.events + stats.lost);
  state.counters["lost"] = static_cast<double>(stats.lost);
  state.counters["lost_pct"] = written > 0 ? 100.0 * static_cast<double>(stats.lost) / written : 0.0;
  state.counters["file_events"] = static_cast<double>(stats.events);
  state.counters["bytes_per_event"] =
      stats.events > 0 ? static_cast<double>(stats.bytes) / static_cast<double>(stats.events) : 0.0;
}

// Pins the calling benchmark thread to CPU (thread index mod CPU count) for
// the case's duration, then restores its affinity. Unpinned, the scheduler
// sometimes runs both writers on one CPU for a while, and they then share
// that CPU's ring (and its head cache line), which measures the scheduler
// rather than the write path. Spoor and LTTng-UST cases are pinned alike.
class PinThread {
 public:
  explicit PinThread(const benchmark::State& state) {
    pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_);
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<int>(state.thread_index() % (cpus > 0 ? cpus : 1)), &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  }
  ~PinThread() { pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_); }

 private:
  cpu_set_t saved_;
};

bool session_ready(benchmark::State& state) {
  if (g_session) return true;
  state.SkipWithError(("spoor session: " + g_session_error).c_str());
  return false;
}

// ---------------------------------------------------------------------------
// Spoor
// ---------------------------------------------------------------------------

void BM_Spoor_Enabled3Fields(benchmark::State& state) {
  if (!session_ready(state)) return;
  PinThread pin(state);
  uint32_t a = static_cast<uint32_t>(state.thread_index()) << 24;
  for (auto _ : state) {
    kThreeFields.write(a, 42u, kFiveChars);
    ++a;
  }
  state.SetItemsProcessed(state.iterations());
  report_session(state);
}

void BM_Spoor_Disabled(benchmark::State& state) {
  if (!session_ready(state)) return;
  uint32_t a = 0;
  for (auto _ : state) {
    kThreeFields.write(a, 42u, kFiveChars);
    ++a;
  }
  state.SetItemsProcessed(state.iterations());
  report_session(state);
}

// The clock read every enabled write makes; on a VM it can be most of the
// write's cost, so it is measured beside it.
void BM_Floor_TickRead(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(spoor_port_ticks());
  state.SetItemsProcessed(state.iterations());
}

// ---------------------------------------------------------------------------
// LTTng-UST
// ---------------------------------------------------------------------------

#if SPOOR_BENCH_HAVE_LTTNG
void BM_LttngUst_3Fields(benchmark::State& state) {
  // Whether a session enabled the tracepoint; 0 means this measured the
  // disabled path (bench/run.sh warns).
  const bool enabled = tracepoint_enabled(spoor_bench, three_fields);
  PinThread pin(state);
  int32_t a = state.thread_index() << 24;
  for (auto _ : state) {
    tracepoint(spoor_bench, three_fields, a, 42, kFiveChars);
    ++a;
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) state.counters["lttng_enabled"] = enabled ? 1 : 0;
}

void BM_LttngUst_Disabled(benchmark::State& state) {
  const bool enabled = tracepoint_enabled(spoor_bench_off, three_fields);
  int32_t a = 0;
  for (auto _ : state) {
    tracepoint(spoor_bench_off, three_fields, a, 42, kFiveChars);
    ++a;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["lttng_enabled"] = enabled ? 1 : 0;
}
#endif

}  // namespace

BENCHMARK(BM_Spoor_Enabled3Fields)->Setup(setup_enabled)->Teardown(teardown_session)
    ->Iterations(kFitIterations)->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK(BM_Spoor_Enabled3Fields)->Name("BM_Spoor_Enabled3Fields_LiveDrain")
    ->Setup(setup_enabled_live)->Teardown(teardown_session)
    ->Iterations(kFitIterations)->UseRealTime()->Threads(1)->Threads(2);
// Each repetition writes a few hundred MB of trace: three are enough to see
// the drop rate.
BENCHMARK(BM_Spoor_Enabled3Fields)->Name("BM_Spoor_Enabled3Fields_Saturated")
    ->Setup(setup_enabled_live)->Teardown(teardown_session)->Repetitions(3)
    ->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK(BM_Spoor_Disabled)->Setup(setup_disabled)->Teardown(teardown_session)->UseRealTime();
BENCHMARK(BM_Floor_TickRead)->UseRealTime();
#if SPOOR_BENCH_HAVE_LTTNG
BENCHMARK(BM_LttngUst_3Fields)->Iterations(kFitIterations)->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK(BM_LttngUst_Disabled)->UseRealTime();
#endif

BENCHMARK_MAIN();
