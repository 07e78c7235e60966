// Spoor.Thread and Spoor.Samples end to end: spoor record on programs whose
// threads, names and CPU use are known, read back with the reader.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report_json.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;

const std::string kSpoor = SPOOR_TOOL;

using spoor::test::Process;
using spoor::test::run;

std::string trace_path(const std::string& name) { return spoor::test::temp_path("thr-" + name + ".spoor"); }

// "key value" lines of the threads program's report.
std::map<std::string, std::string> report_of(const std::string& out) {
  std::map<std::string, std::string> r;
  std::istringstream in(out);
  std::string key, value;
  while (in >> key >> value) r[key] = value;
  return r;
}

uint64_t number(const std::string& text) { return std::stoull(text, nullptr, 0); }

uint64_t u64(const reader::Event& e, const char* name) { return std::get<uint64_t>(*e.field(name)); }

struct ThreadSeen {
  int starts = 0, ends = 0;
  bool ended_with_process = false;  // the last ThreadEnd's with_process
  uint64_t parent = 0, start_fn = 0, stack = 0;
  bool start_on_own_thread = false;
  int64_t start_ns = 0, end_ns = 0;
  uint64_t cpu_ns = 0;  // the last ThreadEnd's
  std::string name;  // the last one
};

struct SampleSeen {
  uint32_t tid;
  uint64_t stack;
  uint64_t periods;
};

struct Recording {
  std::map<uint64_t, ThreadSeen> threads;
  std::map<uint64_t, std::vector<uint64_t>> stacks;
  std::vector<SampleSeen> samples;
  uint64_t shim_start = 0, shim_size = 0;
  std::map<uint64_t, int> shim_starts;  // tid: ShimStarted written on it, the shim's set-up of it
};

Recording read_recording(const std::string& path) {
  Recording r;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return r;
  EXPECT_FALSE(trace->damage());
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    const std::string name(e.descriptor->name);
    if (name == "ThreadStart") {
      ThreadSeen& t = r.threads[u64(e, "tid")];
      t.starts++;
      t.parent = u64(e, "parent_tid");
      t.start_fn = std::get<reader::Pointer>(*e.field("start")).address;
      t.stack = u64(e, "stack");
      t.start_on_own_thread = e.tid == u64(e, "tid");
      t.start_ns = e.time_ns;
    } else if (name == "ThreadEnd") {
      ThreadSeen& t = r.threads[u64(e, "tid")];
      t.ends++;
      t.ended_with_process = std::get<bool>(*e.field("with_process"));
      t.cpu_ns = u64(e, "cpu_ns");
      t.end_ns = e.time_ns;
    } else if (name == "ThreadName") {
      r.threads[u64(e, "tid")].name = std::string(std::get<std::string_view>(*e.field("name")));
    } else if (name == "Stack") {
      const auto blob = std::get<reader::Blob>(*e.field("frames")).bytes;
      std::vector<uint64_t> frames(blob.size() / 8);
      std::memcpy(frames.data(), blob.data(), frames.size() * 8);
      r.stacks[u64(e, "id")] = frames;
    } else if (name == "Sample") {
      r.samples.push_back({e.tid, u64(e, "stack"), u64(e, "periods")});
    } else if (name == "ShimStarted") {
      r.shim_starts[e.tid]++;
    } else if (name == "ModuleLoad") {
      if (std::get<std::string_view>(*e.field("path")).find("libspoor-preload.so") != std::string_view::npos) {
        r.shim_start = std::get<reader::Pointer>(*e.field("start")).address;
        r.shim_size = u64(e, "size");
      }
    }
  }
  return r;
}

// spoor_test_threads run with "report" under `spoor record OPTIONS` into
// the trace `name`: the program's "key value" lines and the recording.
// `recorded` is false (and the test has failed) when the recording did not.
struct ThreadsRun {
  bool recorded = false;
  std::string path;
  std::map<std::string, std::string> report;
  Recording r;
};
ThreadsRun record_threads(const std::string& name, const std::string& options = "") {
  ThreadsRun t;
  t.path = trace_path(name);
  const Process p = run(kSpoor + " record " + options + " -o " + t.path + " -- " + SPOOR_THREADS + " report");
  EXPECT_EQ(p.status, 0) << p.err;
  if (p.status != 0) return t;
  t.recorded = true;
  t.report = report_of(p.out);
  t.r = read_recording(t.path);
  return t;
}

TEST(Threads, EveryThreadIsDescribedFromStartToEndWithItsNames) {
  ThreadsRun rec = record_threads("threads");
  ASSERT_TRUE(rec.recorded);
  auto& report = rec.report;
  const Recording& r = rec.r;

  const uint64_t main_tid = number(report["main"]);
  ASSERT_TRUE(r.threads.count(main_tid));
  const ThreadSeen& main_thread = r.threads.at(main_tid);
  EXPECT_EQ(main_thread.starts, 1);
  EXPECT_EQ(main_thread.parent, 0u);
  EXPECT_EQ(main_thread.ends, 1);
  EXPECT_TRUE(main_thread.ended_with_process) << "main returns: it ends with the process";
  // The kernel keeps 15 bytes of the program's name.
  EXPECT_EQ(main_thread.name, std::filesystem::path(SPOOR_THREADS).filename().string().substr(0, 15));
  EXPECT_EQ(r.shim_starts.count(main_tid) ? r.shim_starts.at(main_tid) : 0, 1) << "the shim's constructor";

  // Each named one way, each ending another.
  for (const char* name : {"returner", "exiter", "cancelled", "spinner"}) {
    SCOPED_TRACE(name);
    const uint64_t tid = number(report[name]);
    ASSERT_TRUE(r.threads.count(tid));
    const ThreadSeen& t = r.threads.at(tid);
    EXPECT_EQ(t.starts, 1);
    EXPECT_EQ(t.ends, 1);
    EXPECT_FALSE(t.ended_with_process) << "it ended by itself";
    EXPECT_TRUE(t.start_on_own_thread);
    EXPECT_LT(t.start_ns, t.end_ns);
    EXPECT_EQ(t.parent, main_tid);
    EXPECT_EQ(t.name, name);
    EXPECT_EQ(r.shim_starts.count(tid) ? r.shim_starts.at(tid) : 0, 1)
        << "the shim's set-up of the thread, for a report to leave its system calls out";
    EXPECT_NE(t.stack, 0u);
    EXPECT_TRUE(r.stacks.count(t.stack)) << "the creator's stack is written";
  }
  EXPECT_EQ(r.threads.at(number(report["returner"])).start_fn, number(report["returner_fn"]));
  EXPECT_EQ(r.threads.size(), 5u);
}

TEST(Samples, LandOnTheSpinningThreadInsideTheSpinningFunction) {
  ThreadsRun rec = record_threads("samples", "--sample-hz 1000");
  ASSERT_TRUE(rec.recorded);
  auto& report = rec.report;
  const Recording& r = rec.r;
  const uint64_t spinner = number(report["spinner"]);
  const uint64_t spin_ns = number(report["spin_ns"]);
  // spin_cpu's extent, from the symbol table; its address from the program.
  const Process nm = run(std::string("nm -S --defined-only ") + SPOOR_THREADS + " | sed -n 's/.* \\([0-9a-f]*\\) T spin_cpu$/\\1/p'");
  ASSERT_FALSE(nm.out.empty()) << "nm finds spin_cpu";
  const uint64_t spin_lo = number(report["spin_cpu"]), spin_hi = spin_lo + std::stoull(nm.out, nullptr, 16);
  auto in_spin = [&](uint64_t pc) { return pc >= spin_lo && pc < spin_hi; };
  ASSERT_NE(r.shim_size, 0u) << "the shim is a described module";

  uint64_t count = 0, periods = 0, first_in_spin = 0, any_in_spin = 0;
  for (const SampleSeen& s : r.samples) {
    EXPECT_TRUE(r.threads.count(s.tid)) << "a sample of an undescribed thread " << s.tid;
    if (s.tid != spinner) continue;
    ++count;
    periods += s.periods;
    ASSERT_TRUE(r.stacks.count(s.stack)) << "stack " << s.stack;
    const std::vector<uint64_t>& frames = r.stacks.at(s.stack);
    ASSERT_FALSE(frames.empty());
    EXPECT_FALSE(frames[0] >= r.shim_start && frames[0] < r.shim_start + r.shim_size)
        << "a sample starts at the interrupted instruction, not in the shim: " << std::hex << frames[0];
    first_in_spin += in_spin(frames[0]);
    for (uint64_t f : frames) {
      if (in_spin(f)) {
        ++any_in_spin;
        break;
      }
    }
  }
  // The spinner spends its CPU time in spin_cpu's loop (and a little in
  // the clock reads it makes from there).
  ASSERT_GT(count, 0u);
  EXPECT_GE(any_in_spin * 100, count * 95) << any_in_spin << " of " << count;
  EXPECT_GE(first_in_spin * 100, count * 80) << first_in_spin << " of " << count;
  // One period per millisecond of its CPU time; loose bounds, as the kernel
  // checks CPU timers only on its tick.
  const uint64_t expected = spin_ns / 1000000;
  EXPECT_GE(periods * 2, expected) << periods << " periods for " << spin_ns << " ns";
  EXPECT_LE(periods, expected * 2) << periods << " periods for " << spin_ns << " ns";
}

// Whether this process may open a task-clock event of its own that counts
// kernel time too: what the shim's task-clock sampler needs.
bool task_clock_allowed() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1000000;
  attr.disabled = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return false;
  close(static_cast<int>(fd));
  return true;
}

// The kernel checks CPU-time timers at its tick (250 Hz on Debian): a
// 1 kHz timer gives a sample per tick standing for about 4 periods. The
// task clock (--sample-clock task) interrupts at each period.
TEST(Samples, TheTaskClockTakesASampleEveryPeriod) {
  if (!task_clock_allowed()) GTEST_SKIP() << "perf_event_open refuses a task clock here";
  ThreadsRun rec = record_threads("samples-task-clock", "--sample-hz 1000 --sample-clock task");
  ASSERT_TRUE(rec.recorded);
  const uint64_t spinner = number(rec.report["spinner"]);
  const uint64_t expected = number(rec.report["spin_ns"]) / 1000000;
  uint64_t samples = 0, periods = 0;
  for (const SampleSeen& s : rec.r.samples)
    if (s.tid == spinner) {
      ++samples;
      periods += s.periods;
    }
  ASSERT_GE(expected, 50u) << "the spinner spins long enough to count";
  EXPECT_GE(samples * 10, expected * 8) << samples << " samples for " << expected << " ms of CPU";
  EXPECT_LE(periods * 10, samples * 11) << periods << " periods in " << samples << " samples";
  EXPECT_LE(periods, expected * 2);
}

// The task clocks' descriptors: one per thread, at most 32, at the top of
// the program's range, gone with the thread, and not left in a fork child;
// none with the timer, the default. (sampling_fds.c prints "WHEN COUNT
// LOWEST".)
TEST(Samples, TaskClockDescriptorsStayAtTheTopAndLeaveWithTheirThreads) {
  if (!task_clock_allowed()) GTEST_SKIP() << "perf_event_open refuses a task clock here";
  const Process plain = run(SPOOR_SAMPLING_FDS);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out, "threads 0 -1\nchild 0 -1\njoined 0 -1\n");
  const Process timer = run(kSpoor + " record -o " + trace_path("sampling-fds-timer") + " -- " + SPOOR_SAMPLING_FDS);
  ASSERT_EQ(timer.status, 0) << timer.err;
  EXPECT_EQ(timer.out, plain.out);

  const Process traced = run(kSpoor + " record --sample-clock task -o " + trace_path("sampling-fds") + " -- " +
                             SPOOR_SAMPLING_FDS + " 40");
  ASSERT_EQ(traced.status, 0) << traced.err;
  std::istringstream lines(traced.out);
  std::map<std::string, std::pair<int, int>> seen;
  std::string when;
  int count = 0, lowest = 0;
  while (lines >> when >> count >> lowest) seen[when] = {count, lowest};
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  const int top = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1024));
  if (top < 256) GTEST_SKIP() << "RLIMIT_NOFILE " << top << ": the shim samples on timers";
  EXPECT_EQ(seen["threads"].first, 32) << traced.out << "41 threads: 32 on task clocks, the rest on timers";
  EXPECT_EQ(seen["child"].first, 1) << traced.out << "the fork child's own thread's only, not its parent's";
  EXPECT_EQ(seen["joined"].first, 1) << traced.out << "the threads' descriptors closed as they ended";
  for (const auto& [w, c] : seen) EXPECT_GE(c.second, top - 64) << w << ": " << traced.out;
}

// ThreadEnd carries the CPU time the thread used, by its own clock: the
// spinner's is at least what it measured spinning (threads.c reads its
// clock before and after) and not much more; every other thread's,
// written by itself or, for those still running at the end, by the thread
// that ends the process, is read too. The report puts the spinner's
// beside its samples.
TEST(Threads, ThreadEndCarriesTheCpuTimeTheThreadUsed) {
  ThreadsRun rec = record_threads("thread-cpu");
  ASSERT_TRUE(rec.recorded);
  auto& report = rec.report;
  const Recording& r = rec.r;
  const std::string& path = rec.path;
  const uint64_t spinner = number(report["spinner"]), spin_ns = number(report["spin_ns"]);
  ASSERT_TRUE(r.threads.count(spinner));
  EXPECT_GE(r.threads.at(spinner).cpu_ns, spin_ns);
  EXPECT_LE(r.threads.at(spinner).cpu_ns, spin_ns + 50'000'000) << "the spinner does little else";
  for (const auto& [tid, t] : r.threads) {
    if (t.ends == 0) continue;
    EXPECT_GT(t.cpu_ns, 0u) << "thread " << tid << (t.ended_with_process ? ", ended with its process" : "");
  }
  const spoor::test::ReportJson cpu = spoor::test::report_json(kSpoor, "--cpu", path);
  ASSERT_EQ(cpu.failure, "");
  bool listed = false;
  for (const nlohmann::json& th : cpu.report.at("cpu").at("threads"))
    if (th.at("tid").get<uint64_t>() == spinner) {
      listed = true;
      EXPECT_EQ(th.at("cpu_ns").get<uint64_t>(), r.threads.at(spinner).cpu_ns);
    }
  EXPECT_TRUE(listed) << cpu.report.at("cpu").at("threads").dump(1);
  EXPECT_GE(cpu.report.at("cpu").at("threads_cpu_ns").get<uint64_t>(), spin_ns);
  const Process text = run(kSpoor + " report --cpu " + path);
  EXPECT_NE(text.out.find("the threads' own clocks: "), std::string::npos) << text.out;
  // Per-thread rows are printed when more than one thread was sampled.
  if (cpu.report.at("cpu").at("threads").size() > 1) {
    EXPECT_NE(text.out.find(" ms of CPU by its own clock"), std::string::npos) << text.out;
  }
}

// A thread's clock runs on across exec: the second image's main thread
// starts with the first image's 200 ms (and the loader's work). ThreadStart
// and Exec carry the clock, so each image counts what it used while traced.
TEST(Threads, EachImageCountsTheCpuTimeItUsedWhileTraced) {
  constexpr uint64_t kMs = 1'000'000, kFirst = 200 * kMs, kSecond = 100 * kMs;
  const std::string path = trace_path("exec-after-spin");
  const Process traced = run(kSpoor + " record -o " + path + " -- " + SPOOR_EXEC_AFTER_SPIN);
  ASSERT_EQ(traced.status, 0) << traced.err;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  reader::EventReader events(trace.value());
  reader::Event e;
  std::vector<uint64_t> starts;  // the main thread's ThreadStart cpu_ns, image after image
  uint64_t exec_ns = 0, end_ns = 0;
  while (events.next(e)) {
    const std::string name(e.descriptor->name);
    if (name == "ThreadStart" && u64(e, "parent_tid") == 0) starts.push_back(u64(e, "cpu_ns"));
    if (name == "Exec") exec_ns = u64(e, "cpu_ns");
    if (name == "ThreadEnd") end_ns = u64(e, "cpu_ns");
  }
  ASSERT_EQ(starts.size(), 2u) << "one main thread per image";
  EXPECT_GE(exec_ns, starts[0] + kFirst) << "the first image spun 200 ms before its exec";
  EXPECT_GE(starts[1], exec_ns) << "the clock runs on into the second image";
  EXPECT_LT(starts[1], exec_ns + 50 * kMs) << "only the loader ran between";
  EXPECT_GE(end_ns, starts[1] + kSecond);
  EXPECT_LT(end_ns, starts[1] + kSecond + 50 * kMs);

  const spoor::test::ReportJson cpu = spoor::test::report_json(kSpoor, "--cpu", path);
  ASSERT_EQ(cpu.failure, "");
  const nlohmann::json& c = cpu.report.at("cpu");
  const uint64_t traced_ns = c.at("threads_traced_cpu_ns").get<uint64_t>();
  const uint64_t untraced_ns = c.at("threads_untraced_cpu_ns").get<uint64_t>();
  EXPECT_EQ(traced_ns, (exec_ns - starts[0]) + (end_ns - starts[1])) << c.dump(1);
  EXPECT_EQ(untraced_ns, starts[0] + (starts[1] - exec_ns)) << "the two loaders' work";
  EXPECT_EQ(c.at("threads_with_cpu_time").get<uint64_t>(), 1u) << "one thread, in two images";
  EXPECT_EQ(c.at("periods_in_threads_without_clock").get<uint64_t>(), 0u) << "both images' clocks are known";
  const Process text = run(kSpoor + " report --cpu " + path);
  char line[128];
  std::snprintf(line, sizeof line, "the threads' own clocks: %.0f ms of CPU time in 1 thread while traced",
                static_cast<double>(traced_ns) / 1e6);
  EXPECT_NE(text.out.find(line), std::string::npos) << text.out;
  if (untraced_ns >= kMs) {
    EXPECT_NE(text.out.find(" before Spoor attached"), std::string::npos) << text.out;
  }
}

// Without the thread provider the trace has no ThreadStart or ThreadEnd:
// the only clock is Exec's, the first image's, while the samples go on in
// the second. The report leaves such threads out of the clocks' sum and
// says how many periods they hold, rather than put 200 ms of clock beside
// 300 ms of samples.
TEST(Threads, SampledThreadsWithoutAClockAtTheirEndAreSaidApart) {
  const std::string path = trace_path("exec-after-spin-samples-only");
  const Process traced = run(kSpoor + " record -p samples -o " + path + " -- " + SPOOR_EXEC_AFTER_SPIN);
  ASSERT_EQ(traced.status, 0) << traced.err;
  const spoor::test::ReportJson cpu = spoor::test::report_json(kSpoor, "--cpu", path);
  ASSERT_EQ(cpu.failure, "");
  const nlohmann::json& c = cpu.report.at("cpu");
  ASSERT_GT(c.at("periods").get<uint64_t>(), 0u) << "it spun 300 ms";
  EXPECT_EQ(c.at("periods_in_threads_without_clock").get<uint64_t>(), c.at("periods").get<uint64_t>()) << c.dump(1);
  EXPECT_EQ(c.at("threads_with_cpu_time").get<uint64_t>(), 0u) << "Exec's clock is not the thread's end";
  const Process text = run(kSpoor + " report --cpu " + path);
  EXPECT_EQ(text.out.find("the threads' own clocks: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" whose own clock the trace lacks"), std::string::npos) << text.out;
}

TEST(Samples, NoneAtZeroHertzNorWhenTheProviderIsOff) {
  const std::string off = trace_path("samples-off");
  ASSERT_EQ(run(kSpoor + " record --sample-hz 0 -o " + off + " -- " + SPOOR_THREADS).status, 0);
  Recording r = read_recording(off);
  EXPECT_TRUE(r.samples.empty());
  EXPECT_EQ(r.threads.size(), 5u) << "threads are described without samples";

  const std::string heap_only = trace_path("samples-heap-only");
  ASSERT_EQ(run(kSpoor + " record -p Spoor.Heap,Spoor.Stack -o " + heap_only + " -- " + SPOOR_THREADS).status, 0);
  r = read_recording(heap_only);
  EXPECT_TRUE(r.samples.empty());
  EXPECT_TRUE(r.threads.empty());
}

// The sample handler does not rescan the modules itself (dl_iterate_phdr
// takes the loader's lock, which the interrupted code may hold half taken:
// the handler then waited for itself forever, seen in a python3 importing
// modules under --sample-hz 10000; libunwind's own calls are kept from
// that state by loader_lock.h). dlopen_spin.c loads a module, which
// leaves the shim a module scan pending, then spins without calling a
// hook while samples land, and counts the dl_iterate_phdr calls the shim
// makes meanwhile (from its handler: nothing else runs). Under both clocks.
TEST(Samples, TheHandlerDoesNotListTheModules) {
  for (const std::string clock : {"timer", "task"}) {
    if (clock == "task" && !task_clock_allowed()) continue;
    SCOPED_TRACE(clock);
    const std::string path = trace_path("samples-dlopen-" + clock);
    const Process p = run(kSpoor + " record --sample-hz 10000 --sample-clock " + clock + " -o " + path + " -- " +
                          SPOOR_DLOPEN_SPIN + " " + SPOOR_DLOPEN_MODULE + " 300");
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(p.out.rfind("0 calls of dl_iterate_phdr by the shim while spinning", 0), 0u) << p.out;
    const Recording r = read_recording(path);
    EXPECT_GE(r.samples.size(), 5u) << "samples landed while the scan was pending";
  }
}

TEST(Samples, AProgramADebuggerHoldsFromItsStartGetsNoSamplingSignals) {
  // tracer.c runs threads.c (a thread spinning 300 ms of CPU) under ptrace
  // as gdb does: it follows the threads and reaps their ends with __WALL,
  // and counts the signals the program is sent at the sampler's signal.
  const std::string path = trace_path("samples-under-tracer");
  const Process p = run(kSpoor + " record -o " + path + " -- " + SPOOR_TRACER + " " + SPOOR_THREADS);
  if (p.status == 125 && p.err.find("tracer: PTRACE_TRACEME") != std::string::npos)
    GTEST_SKIP() << "ptrace is not allowed here: " << p.err;
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_EQ(p.out, "threads: done\n");
  EXPECT_NE(p.err.find("tracer: 0 signals at SIGRTMAX-5"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("spoor record: no CPU samples from " + std::string(SPOOR_THREADS) + " (spoor_test_trac)"),
            std::string::npos)
      << p.err;
  const Recording r = read_recording(path);
  EXPECT_EQ(r.threads.size(), 6u) << "the tracer's main thread, the program's and its four";

  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "", path);
  ASSERT_TRUE(report.failure.empty()) << report.failure;
  const nlohmann::json& processes = report.report["processes"];
  ASSERT_EQ(processes.size(), 2u) << "the threads the tracer reaped are not processes: " << processes.dump();
  const nlohmann::json& program = processes[1];
  EXPECT_EQ(program["ppid"], processes[0]["pid"]);
  EXPECT_EQ(program["thread_count"], 5u);
  EXPECT_EQ(program.value("samples_off_under", ""),
            "spoor_test_trac (pid " + std::to_string(processes[0]["pid"].get<uint32_t>()) + ")");
  // The tracer itself is sampled (it is under no tracer); the program not.
  std::set<uint32_t> program_tids;
  for (const nlohmann::json& t : program["threads"]) program_tids.insert(t["tid"].get<uint32_t>());
  ASSERT_EQ(program_tids.size(), 5u) << program.dump();
  for (const SampleSeen& s : r.samples) EXPECT_EQ(program_tids.count(s.tid), 0u) << "a sample of thread " << s.tid;
}

TEST(Samples, ThreadsProgramOutputIsUnchanged) {
  const Process plain = run(SPOOR_THREADS);
  const Process traced = run(kSpoor + " record -o " + trace_path("threads-same") + " -- " + SPOOR_THREADS);
  EXPECT_EQ(plain.out, "threads: done\n");
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.status, plain.status);
}

TEST(Samples, AProgramUsingProfilingSignalsItselfWorksAsUntraced) {
  // Its own SIGPROF timer, a handler on the sampler's own signal, and a
  // thread that blocks and waits for every signal (signals.c).
  const Process plain = run(SPOOR_SIGNALS);
  ASSERT_EQ(plain.status, 0) << plain.out;
  const std::string path = trace_path("signals");
  const Process traced = run(kSpoor + " record -o " + path + " -- " + SPOOR_SIGNALS);
  EXPECT_EQ(traced.status, 0) << traced.out << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  const Recording r = read_recording(path);
  EXPECT_FALSE(r.samples.empty()) << "and it is sampled meanwhile";
}

TEST(Samples, ThreadsThatBlockEverySignalAreSampledAndSeeTheirMasksUnchanged) {
  // blocked_signals.c: a worker created with every signal blocked, which
  // blocks them all again, then burns 300 ms of CPU.
  const Process plain = run(SPOOR_BLOCKED_SIGNALS);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.out.find("worker, blocked again: SIGINT blocked, SIGRTMAX-5 blocked"), std::string::npos)
      << plain.out;
  const std::string path = trace_path("blocked-signals");
  const Process traced = run(kSpoor + " record --sample-hz 1000 -o " + path + " -- " + SPOOR_BLOCKED_SIGNALS);
  ASSERT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out) << "each thread's mask reads as the program set it";
  const size_t at = traced.err.find("worker: ");
  ASSERT_NE(at, std::string::npos) << traced.err;
  const uint64_t worker = std::stoull(traced.err.substr(at + 8));
  const Recording r = read_recording(path);
  uint64_t samples = 0, periods = 0;
  for (const SampleSeen& s : r.samples)
    if (s.tid == worker) {
      ++samples;
      periods += s.periods;
    }
  EXPECT_GE(samples, 10u) << "the worker's 300 ms of CPU";
  EXPECT_GE(periods, 100u);
}

TEST(Samples, AnImageStartedWithEverySignalBlockedIsSampled) {
  const std::string cmd = std::string(SPOOR_BLOCKED_SIGNALS) + " exec";
  const Process plain = run(cmd);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out, "execd main, as started: SIGINT blocked, SIGRTMAX-5 blocked\n");
  const std::string path = trace_path("blocked-exec");
  const Process traced = run(kSpoor + " record --sample-hz 1000 -o " + path + " -- " + cmd);
  ASSERT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out) << "the mask reads as inherited";
  const size_t at = traced.err.find("execd: ");
  ASSERT_NE(at, std::string::npos) << traced.err;
  const uint64_t tid = std::stoull(traced.err.substr(at + 7));
  uint64_t samples = 0;
  for (const SampleSeen& s : read_recording(path).samples) samples += s.tid == tid;
  EXPECT_GE(samples, 10u) << "300 ms of CPU on the exec'd image's main thread";
}

TEST(Samples, TimeInForkIsChargedToForkNotToTheSignalMask) {
  // fork_heap.c forks 200 times with 64 MiB of heap touched: the kernel's
  // copy of the page tables is most of its CPU time. The shim's fork
  // handlers block signals around the fork; a sample that fell due in the
  // fork was once held back to the unblock, and the report gave most of
  // the program's time to pthread_sigmask.
  const std::string path = trace_path("fork-heap");
  const Process traced = run(kSpoor + " record --sample-hz 1000 -o " + path + " -- " + SPOOR_FORK_HEAP);
  ASSERT_EQ(traced.status, 0) << traced.err;
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "--cpu", path);
  ASSERT_EQ(report.failure, "");
  const nlohmann::json& cpu = report.report.at("cpu");
  const double total = cpu.at("cpu_ms").get<double>();
  double in_fork = 0, in_mask = 0;
  for (const nlohmann::json& f : cpu.at("functions")) {
    std::string name = f.at("function").get<std::string>();
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const double self = f.at("self").get<double>();
    if (name.find("fork") != std::string::npos) in_fork += self;
    if (name.find("sigmask") != std::string::npos || name.find("sigprocmask") != std::string::npos) in_mask += self;
  }
  ASSERT_GE(total, 50) << "a sampled run: " << cpu.dump();
  // The rest is mostly the memset that touched the heap (a third to a
  // half of the CPU time, run to run).
  EXPECT_GE(in_fork, total / 4) << cpu.dump();
  EXPECT_LE(in_mask, total / 10) << cpu.dump();
}

TEST(Threads, AProgramThatAsksForItsOwnStackFirstRunsToItsEnd) {
  // getattr_first.c calls pthread_getattr_np first thing in main and in a
  // thread, as Rust's runtime does; glibc allocates inside it with the
  // thread's lock held. (The timeout turns a hang into a failure.)
  const Process plain = run(SPOOR_GETATTR_FIRST);
  ASSERT_EQ(plain.out, "main: 1, thread: 1\n") << plain.err;
  const std::string path = trace_path("getattr-first");
  const Process traced =
      run("timeout 60 " + kSpoor + " record -o " + path + " -- " + SPOOR_GETATTR_FIRST);
  ASSERT_EQ(traced.status, 0) << "124: it hung. " << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  const Recording r = read_recording(path);
  EXPECT_EQ(r.threads.size(), 2u);
}

// Sampling costs an idle thread no unwinder cache: libunwind's per-thread
// trace cache (256 KiB) is set up by a thread's first sample, so 200
// threads that never run long enough to be sampled add little memory.
TEST(Samples, IdleThreadsCostNoUnwinderCache) {
  const Process plain = run(std::string(SPOOR_IDLE_THREADS) + " 200");
  ASSERT_EQ(plain.status, 0) << plain.err;
  const Process traced = run(kSpoor + " record --sample-hz 1000 -o " + trace_path("idle-threads") + " -- " +
                             SPOOR_IDLE_THREADS + " 200");
  ASSERT_EQ(traced.status, 0) << traced.err;
  const long plain_kb = std::stol(plain.out), traced_kb = std::stol(traced.out);
  // Rings, tables and each thread's 8 KiB of recent walks: ~4 MB here; with
  // a cache per thread it was ~55 MB.
  EXPECT_LT(traced_kb - plain_kb, 25 * 1024) << plain_kb << " kB untraced, " << traced_kb << " kB traced";
}

// A Go program (cgo: dynamically linked) whose goroutines burn CPU on
// stacks of a few KiB: Go installs its handlers with SA_ONSTACK, and so
// must the sampler be, or its handler overflows the goroutine's stack (the
// runtime then dies with "unexpected fault address" or "unknown caller
// pc"). Built at test time; skipped without Go (golang-go).
TEST(Samples, GoroutinesAreSampledOnTheirThreadsSignalStacks) {
  if (!spoor::test::have_program("go")) GTEST_SKIP() << "no go toolchain";
  const std::string dir = spoor::test::temp_path("thr-go-build");
  const std::string binary = dir + "/gogoroutines";
  const Process build = run("mkdir -p " + dir + " && cd " + std::string(SPOOR_GO_PROGRAM_DIR) +
                            " && GOCACHE=" + dir + "/cache GOFLAGS=-mod=mod CGO_ENABLED=1 go build -o " + binary + " .");
  ASSERT_EQ(build.status, 0) << build.err;
  const Process plain = run(binary);
  ASSERT_EQ(plain.out, "goroutines done true\n") << plain.err;
  for (int i = 0; i < 3; ++i) {
    const std::string path = trace_path("go-" + std::to_string(i));
    const Process traced = run(kSpoor + " record --sample-hz 1000 -o " + path + " -- " + binary);
    ASSERT_EQ(traced.status, 0) << traced.err.substr(0, 2000);
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_FALSE(read_recording(path).samples.empty());
  }
  run("rm -rf " + dir);
}

// A Go program that allocates with C's malloc through cgo, on the main
// goroutine and another, then burns CPU in C. The C code runs on the
// thread's system stack; the allocation's and the samples' stacks go on
// past Go's asmcgocall into the goroutine's frames (they ended there
// before, at "runtime.asmcgocall.abi0"). Built at test time; skipped
// without Go (golang-go).
TEST(GoCgo, CAllocationsAndSamplesHaveTheGoroutinesFrames) {
  if (!spoor::test::have_program("go")) GTEST_SKIP() << "no go toolchain";
  const std::string dir = spoor::test::temp_path("go-cgo-build");
  const std::string binary = dir + "/gocgoheap";
  const Process build = run("mkdir -p " + dir + " && cd " + std::string(SPOOR_GO_CGO_HEAP_DIR) + " && GOCACHE=" + dir +
                            "/cache GOFLAGS=-mod=mod CGO_ENABLED=1 go build -o " + binary + " .");
  ASSERT_EQ(build.status, 0) << build.err;
  const Process plain = run(binary);
  ASSERT_EQ(plain.out, "cgo blocks 500 true\n") << plain.err;
  const std::string path = trace_path("go-cgo");
  const Process traced = run(kSpoor + " record -o " + path + " -- " + binary);
  ASSERT_EQ(traced.status, 0) << traced.err.substr(0, 2000);
  EXPECT_EQ(traced.out, plain.out);
  // A capture that meets another thread building unwind rules waits for
  // it (it went to libunwind, which stops at asmcgocall: with the machine
  // loaded, all 300 of a goroutine's stacks in 3 of 30 runs).
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "--heap --top 50", path);
  ASSERT_EQ(report.failure, "");
  // Go's own frames carry their lines: the call of C.grab_block in
  // allocateBlocks is main.go's line that says so. (Go's .debug_aranges
  // lists only the C objects; libdw's lookup gave each Go function the
  // last C unit before it, and the line was left out.)
  uint32_t call_line = 0;
  {
    std::ifstream source(std::string(SPOOR_GO_CGO_HEAP_DIR) + "/main.go");
    std::string text;
    for (uint32_t number = 1; std::getline(source, text); ++number)
      if (text.find("C.grab_block(") != std::string::npos) call_line = number;
  }
  ASSERT_NE(call_line, 0u);
  uint64_t whole = 0, with_line = 0;
  for (const nlohmann::json& site : report.report.at("heap").at(0).at("top_by_calls")) {
    std::vector<std::string> names;
    for (const nlohmann::json& f : site.at("frames")) names.push_back(f.at("function").get<std::string>());
    if (names.empty() || names[0] != "grab_block") continue;
    auto has = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
    if (!has("main.allocateBlocks") || !(has("main.main") || has("main.main.func1"))) continue;
    whole += site.at("calls").get<uint64_t>();
    for (const nlohmann::json& f : site.at("frames")) {
      const std::string file = f.at("file").get<std::string>();
      if (f.at("function") == "main.allocateBlocks" && file.size() >= 8 &&
          file.compare(file.size() - 8, 8, "/main.go") == 0 && f.at("line").get<uint32_t>() == call_line)
        with_line += site.at("calls").get<uint64_t>();
    }
  }
  EXPECT_GE(whole, 495u) << report.report.at("heap").at(0).at("top_by_calls").dump(1).substr(0, 3000);
  EXPECT_EQ(with_line, whole) << "main.go:" << call_line << " expected: "
                              << report.report.at("heap").at(0).at("top_by_calls").dump(1).substr(0, 3000);
  // CPU samples in the C code: the thread takes no hook meanwhile, so the
  // signal's walk recognises asmcgocall itself.
  const spoor::test::ReportJson cpu = spoor::test::report_json(kSpoor, "--cpu --top 20", path);
  ASSERT_EQ(cpu.failure, "");
  uint64_t burn = 0, spin = 0;
  for (const nlohmann::json& f : cpu.report.at("cpu").at("functions_by_inclusive")) {
    if (f.at("function") == "burn") burn = f.at("inclusive").get<uint64_t>();
    if (f.at("function") == "main.spinInC") spin = f.at("inclusive").get<uint64_t>();
  }
  EXPECT_GT(burn, 20u) << cpu.report.at("cpu").dump(1).substr(0, 3000);
  EXPECT_GE(spin * 10, burn * 9) << "samples in burn reach the Go function that called it: "
                                 << cpu.report.at("cpu").at("functions_by_inclusive").dump(1).substr(0, 3000);
  run("rm -rf " + dir);
}

TEST(Samples, SampleRateUsageErrors) {
  EXPECT_EQ(run(kSpoor + " record --sample-hz -- true").status, 2);
  EXPECT_EQ(run(kSpoor + " record --sample-hz 1k -- true").status, 2);
  EXPECT_EQ(run(kSpoor + " record --sample-hz 20000 -- true").status, 2);
  const Process clock = run(kSpoor + " record --sample-clock tick -- true");
  EXPECT_EQ(clock.status, 2);
  EXPECT_NE(clock.err.find("--sample-clock takes task or timer"), std::string::npos) << clock.err;
}

}  // namespace
