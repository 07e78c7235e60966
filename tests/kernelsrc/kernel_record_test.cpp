// spoor record --kernel end to end: small programs whose switches, faults,
// syscalls and samples are known, checked in the trace and against perf
// stat on the same run. Skips (saying why) where perf_event_open is not
// allowed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "perf_access.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;
using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;

struct KernelEvent {
  std::string name;
  uint64_t ticks;
  int64_t time_ns;
  std::map<std::string, reader::Value> fields;  // strings and blobs point into the trace: see below
  std::map<std::string, std::string> strings;   // copies of the string and blob fields
  uint64_t u(const std::string& f) const { return std::get<uint64_t>(fields.at(f)); }
  int64_t i(const std::string& f) const { return std::get<int64_t>(fields.at(f)); }
  bool b(const std::string& f) const { return std::get<bool>(fields.at(f)); }
  std::string s(const std::string& f) const { return strings.at(f); }
  size_t blob(const std::string& f) const { return strings.at(f).size(); }
};

struct Recording {
  std::vector<KernelEvent> kernel;  // Spoor.Kernel events, in time order
  std::vector<KernelEvent> user;    // every other event
  uint64_t stream_lost = 0;
};

Recording read_trace(const std::string& path) {
  Recording r;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return r;
  EXPECT_FALSE(trace->damage());
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    KernelEvent k{std::string(e.descriptor->name), e.ticks, e.time_ns, {}, {}};
    for (const auto& f : e.fields) {
      const std::string name(f.field->name);
      k.fields[name] = f.value;
      if (auto* sv = std::get_if<std::string_view>(&f.value)) k.strings[name] = std::string(*sv);
      if (auto* b = std::get_if<reader::Blob>(&f.value))
        k.strings[name] = std::string(reinterpret_cast<const char*>(b->bytes.data()), b->bytes.size());
    }
    if (std::string_view(e.provider->name) == "Spoor.Kernel") r.kernel.push_back(std::move(k));
    else r.user.push_back(std::move(k));
  }
  for (const auto& s : trace->streams())
    if (s.end) r.stream_lost += s.end->lost_total;
  return r;
}

std::string trace_path(const std::string& name) { return spoor::test::temp_path("kernel-" + name + ".spoor"); }

// The pid the program ran as: the one whose Comm says it exec'd `comm`.
uint32_t exec_pid(const Recording& r, const std::string& comm_prefix, uint64_t* exec_ticks = nullptr) {
  for (const KernelEvent& e : r.kernel)
    if (e.name == "Comm" && e.b("exec") && e.s("comm").starts_with(comm_prefix.substr(0, 15))) {
      if (exec_ticks) *exec_ticks = e.ticks;
      return static_cast<uint32_t>(e.u("pid"));
    }
  return 0;
}

size_t count(const Recording& r, const std::string& name, const std::function<bool(const KernelEvent&)>& pred) {
  return static_cast<size_t>(
      std::count_if(r.kernel.begin(), r.kernel.end(), [&](const KernelEvent& e) { return e.name == name && pred(e); }));
}

std::string base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

TEST(KernelRecord, PingPongThreadsAreSwitchedOutBlockedAndBackIn) {
  SKIP_WITHOUT_PERF();
  const std::string path = trace_path("pingpong");
  const Process p = run(kSpoor + " record -o " + path + " --kernel=switches -- " + SPOOR_PINGPONG + " 500");
  ASSERT_EQ(p.status, 0) << p.err;
  const Recording r = read_trace(path);
  const uint32_t pid = exec_pid(r, base(SPOOR_PINGPONG));
  ASSERT_NE(pid, 0u);
  std::set<uint64_t> tids;
  const size_t blocked = count(r, "ContextSwitch", [&](const KernelEvent& e) {
    if (e.u("pid") == pid) tids.insert(e.u("tid"));
    return e.u("pid") == pid && e.b("out") && !e.b("preempted");
  });
  const size_t back_in = count(r, "ContextSwitch", [&](auto& e) { return e.u("pid") == pid && !e.b("out"); });
  // Each of the two threads waits in read() for each of the 500 bytes.
  EXPECT_GE(blocked, 500u) << p.err;
  // Every switch out is followed by one back in, except each thread's last
  // (at its exit) and, for the main thread, the exec it was running at.
  EXPECT_GE(back_in + 2, blocked);
  EXPECT_GE(tids.size(), 2u) << "both threads, through inherit";
  EXPECT_NE(p.err.find("kernel: "), std::string::npos) << "the summary names the kernel's records";
}

TEST(KernelRecord, SyscallsShowTheProgramsWritesWithTheirReturnValues) {
  SKIP_WITHOUT_PERF();
  const std::string path = trace_path("syscalls");
  // No shim: its own writes (to the recorder) are not the program's.
  const Process p =
      run(kSpoor + " record --no-preload -o " + path + " --kernel=syscalls:read,write -- " + SPOOR_PINGPONG + " 300");
  ASSERT_EQ(p.status, 0) << p.err;
  if (p.err.find("syscalls:write unavailable") != std::string::npos) GTEST_SKIP() << p.err;
  const Recording r = read_trace(path);
  size_t byte_writes = 0, line_writes = 0, enters = 0;
  for (const KernelEvent& e : r.kernel) {
    if (e.name == "SyscallEnter" && e.s("name") == "write") {
      ++enters;
      EXPECT_EQ(e.blob("args"), 48u);
    }
    if (e.name == "SyscallExit" && e.s("name") == "write") {
      byte_writes += e.i("ret") == 1;
      line_writes += e.i("ret") == 11;  // "300 rounds\n"
    }
  }
  EXPECT_EQ(byte_writes, 600u) << "300 round trips, one byte each way";
  EXPECT_EQ(line_writes, 1u);
  EXPECT_GE(enters, 601u);
}

// The Spoor.IO Write the shim records for a write() call sits around the
// kernel's enter and exit of that call: the two clocks are one timeline.
TEST(KernelRecord, KernelAndUserEventsInterleaveOnOneTimeline) {
  SKIP_WITHOUT_PERF();
  const std::string path = trace_path("interleave");
  const Process p = run(kSpoor + " record -o " + path + " --kernel=syscalls:write -- " + SPOOR_PINGPONG + " 200");
  ASSERT_EQ(p.status, 0) << p.err;
  if (p.err.find("unavailable") != std::string::npos) GTEST_SKIP() << p.err;
  const Recording r = read_trace(path);
  std::vector<const KernelEvent*> exits;
  for (const KernelEvent& e : r.kernel)
    if (e.name == "SyscallExit" && e.s("name") == "write") exits.push_back(&e);
  size_t writes = 0, inside = 0;
  for (const KernelEvent& w : r.user) {
    if (w.name != "Write" || w.fields.count("start_ticks") == 0) continue;
    ++writes;
    const uint64_t start = w.u("start_ticks");
    // Some kernel exit of write() lies between the call's start and its record.
    inside += std::any_of(exits.begin(), exits.end(),
                          [&](const KernelEvent* x) { return x->ticks >= start && x->ticks <= w.ticks; });
  }
  ASSERT_GE(writes, 400u);
  EXPECT_GE(inside * 100, writes * 95) << inside << " of " << writes;
}

struct PerfStat {
  uint64_t context_switches = 0, page_faults = 0;
  bool ok = false;
};

PerfStat read_perf_stat(const std::string& path) {
  PerfStat s;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string value, unit, event;
    if (!std::getline(fields, value, ',') || !std::getline(fields, unit, ',') || !std::getline(fields, event, ','))
      continue;
    if (event.starts_with("context-switches")) s.context_switches = std::strtoull(value.c_str(), nullptr, 10), s.ok = true;
    if (event.starts_with("page-faults")) s.page_faults = std::strtoull(value.c_str(), nullptr, 10);
  }
  return s;
}

// perf stat runs inside the recording and counts the same run of the
// program from its exec; spoor's events for the program after that exec
// must add up to the same within 5%.
TEST(KernelRecord, SwitchAndFaultCountsAgreeWithPerfStatWithin5Percent) {
  SKIP_WITHOUT_PERF();
  if (run("perf --version").status != 0) GTEST_SKIP() << "perf is not installed (scripts/install-test-deps.sh)";
  const std::string path = trace_path("perfstat"), stat = spoor::test::temp_path("perf-stat.csv");
  const Process p = run(kSpoor + " record --no-preload -o " + path + " --kernel=switches,faults -- perf stat -x, -o " +
                        stat + " -e context-switches,page-faults -- " + SPOOR_PINGPONG + " 2000");
  ASSERT_EQ(p.status, 0) << p.err;
  const PerfStat s = read_perf_stat(stat);
  std::remove(stat.c_str());
  if (!s.ok) GTEST_SKIP() << "perf stat counted nothing: " << p.err;
  const Recording r = read_trace(path);
  uint64_t exec_ticks = 0;
  const uint32_t pid = exec_pid(r, base(SPOOR_PINGPONG), &exec_ticks);
  ASSERT_NE(pid, 0u);
  const size_t switches =
      count(r, "ContextSwitch", [&](auto& e) { return e.u("pid") == pid && e.b("out") && e.ticks >= exec_ticks; });
  const size_t faults = count(r, "PageFault", [&](auto& e) { return e.u("pid") == pid && e.ticks >= exec_ticks; });
  EXPECT_EQ(r.stream_lost, 0u);
  EXPECT_NEAR(static_cast<double>(switches), static_cast<double>(s.context_switches), 0.05 * s.context_switches)
      << "perf stat: " << s.context_switches;
  EXPECT_NEAR(static_cast<double>(faults), static_cast<double>(s.page_faults), 0.05 * s.page_faults)
      << "perf stat: " << s.page_faults;
  EXPECT_GE(switches, 2000u);
}

TEST(KernelRecord, PageFaultsLandOnEveryTouchedPage) {
  SKIP_WITHOUT_PERF();
  const std::string path = trace_path("faults");
  const Process p = run(kSpoor + " record --no-preload -o " + path + " --kernel=faults -- " + SPOOR_TOUCH_PAGES + " 1000");
  ASSERT_EQ(p.status, 0) << p.err;
  unsigned long long start = 0;
  long pages = 0, page = 0;
  ASSERT_EQ(std::sscanf(p.out.c_str(), "%llx %ld %ld", &start, &pages, &page), 3) << p.out;
  const Recording r = read_trace(path);
  std::set<uint64_t> touched;
  size_t in_range = 0;
  for (const KernelEvent& e : r.kernel) {
    if (e.name != "PageFault") continue;
    const uint64_t a = e.u("address");
    if (a >= start && a < start + static_cast<uint64_t>(pages * page)) {
      ++in_range;
      touched.insert((a - start) / static_cast<uint64_t>(page));
    }
  }
  EXPECT_GE(in_range, 1000u);
  EXPECT_EQ(touched.size(), 1000u) << "a fault at every page the program touched";
}

// The [start, end) of `symbol` in `binary` (a non-PIE executable), from nm.
std::pair<uint64_t, uint64_t> symbol_range(const std::string& binary, const std::string& symbol) {
  const Process nm = run("nm -S " + binary);
  std::istringstream lines(nm.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string addr, size, type, name;
    if ((in >> addr >> size >> type >> name) && name == symbol) {
      const uint64_t a = std::strtoull(addr.c_str(), nullptr, 16);
      return {a, a + std::strtoull(size.c_str(), nullptr, 16)};
    }
  }
  return {0, 0};
}

void expect_samples_in_spin_here(const std::string& binary, const std::string& extra_options) {
  const std::string path = trace_path("spin");
  const Process p = run(kSpoor + " record -o " + path + " --sample-hz 1000 " + extra_options + " -- " + binary + " 300");
  ASSERT_EQ(p.status, 0) << p.err;
  const auto [lo, hi] = symbol_range(binary, "spin_here");
  ASSERT_LT(lo, hi);
  const Recording r = read_trace(path);
  size_t samples = 0, in_spin = 0, with_stack = 0;
  for (const KernelEvent& e : r.kernel) {
    if (e.name != "CpuSample") continue;
    ++samples;
    in_spin += e.u("ip") >= lo && e.u("ip") < hi;
    if (e.u("regs_abi") != 0) {
      EXPECT_EQ(e.blob("regs"), 8u * __builtin_popcountll(e.u("regs_mask")));
#if defined(__x86_64__)
      EXPECT_EQ(e.blob("regs"), 17u * 8);
#endif
      with_stack += e.blob("stack") > 0;
    }
  }
  // 300 ms of CPU at 1 kHz; the kernel may merge or drop a few.
  EXPECT_GE(samples, 100u) << p.err;
  EXPECT_GE(in_spin * 2, samples) << "most samples in the spinning function";
  EXPECT_GE(with_stack * 10, samples * 9) << "user registers and a stack copy to unwind from";
  bool mapped = false;
  for (const KernelEvent& e : r.kernel) mapped |= e.name == "Mmap" && e.s("path") == binary;
  EXPECT_TRUE(mapped) << "the program's own mapping, to symbolize against";
}

// The kernel functions a recording's samples ran in are named in the trace
// (KernelSymbol, from /proc/kallsyms at its end) where kallsyms shows its
// addresses: every kernel frame of every sample is held by one of them,
// each is the symbol kallsyms has at its address, and the report's kernel
// profile names them.
TEST(KernelRecord, KernelFramesOfSamplesAreNamedFromKallsyms) {
  SKIP_WITHOUT_PERF();
  // Unprivileged, samples are of user mode only (the tiers: attr_plan.h).
  if (geteuid() != 0) GTEST_SKIP() << "kernel stacks need root or CAP_PERFMON";
  std::map<uint64_t, std::string> kallsyms;  // text symbols, by address
  {
    std::ifstream in("/proc/kallsyms");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string address, type, name;
      if (!(words >> address >> type >> name) || type.size() != 1 || std::string("tTwW").find(type[0]) == std::string::npos)
        continue;
      const uint64_t a = std::strtoull(address.c_str(), nullptr, 16);
      if (a != 0) kallsyms.emplace(a, name);
    }
  }
  const std::string path = trace_path("kernel-symbols");
  // Reading /dev/zero keeps the CPU in the kernel, clearing read()'s buffer.
  const Process p = run(kSpoor + " record --no-preload -o " + path +
                        " --kernel=samples --sample-hz 1000 -- dd if=/dev/zero of=/dev/null bs=1M count=1500");
  ASSERT_EQ(p.status, 0) << p.err;
  const Recording r = read_trace(path);
  std::map<uint64_t, std::string> named;
  for (const KernelEvent& e : r.kernel)
    if (e.name == "KernelSymbol") named.emplace(e.u("address"), e.s("name"));
  if (kallsyms.empty()) {
    EXPECT_TRUE(named.empty()) << "kallsyms hides its addresses here: nothing to name";
    GTEST_SKIP() << "/proc/kallsyms shows no addresses here (kptr_restrict)";
  }
  size_t kernel_frames = 0;
  for (const KernelEvent& e : r.kernel) {
    if (e.name != "CpuSample") continue;
    const std::string& chain = e.strings.at("kernel_callchain");
    for (size_t at = 0; at + 8 <= chain.size(); at += 8) {
      uint64_t ip = 0;
      std::memcpy(&ip, chain.data() + at, 8);
      ++kernel_frames;
      auto held = named.upper_bound(ip);
      ASSERT_NE(held, named.begin()) << std::hex << ip << " is named by no KernelSymbol";
      --held;
      auto truth = kallsyms.upper_bound(ip);
      ASSERT_NE(truth, kallsyms.begin());
      --truth;
      EXPECT_EQ(held->first, truth->first) << std::hex << ip;
    }
  }
  ASSERT_GT(kernel_frames, 0u) << "dd's samples in the kernel: " << p.err;
  for (const auto& [address, name] : named) {
    auto it = kallsyms.find(address);
    ASSERT_NE(it, kallsyms.end()) << name;
  }
  const Process report = run(kSpoor + " report --kernel " + path);
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find(" [kernel]"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find(") taken in the kernel, "), std::string::npos) << report.out;
}

// /proc/kallsyms kept between recordings (kallsyms_cache.h): the first
// recording writes the copy beside the unwind rules' cache, the next one
// names kernel functions from it (shown here by renaming every function
// in the copy), and a copy from another boot is not used.
TEST(KernelRecord, KernelFunctionsAreNamedFromTheKeptKallsymsInTheSameBoot) {
  SKIP_WITHOUT_PERF();
  if (geteuid() != 0) GTEST_SKIP() << "kernel stacks need root or CAP_PERFMON";
  const std::string dir = spoor::test::temp_path("kallsyms-kept");
  std::filesystem::remove_all(dir);
  const std::string cache = dir + "/kallsyms", path = trace_path("kallsyms-kept");
  auto record = [&](std::map<uint64_t, std::string>* named) {
    const Process p = run("SPOOR_RULE_CACHE=" + dir + "/unwind-rules " + kSpoor + " record --no-preload -o " + path +
                          " --kernel=samples -- dd if=/dev/zero of=/dev/null bs=1M count=300");
    ASSERT_EQ(p.status, 0) << p.err;
    for (const KernelEvent& e : read_trace(path).kernel)
      if (e.name == "KernelSymbol") named->emplace(e.u("address"), e.s("name"));
  };
  std::map<uint64_t, std::string> first;
  record(&first);
  if (first.empty()) GTEST_SKIP() << "no kernel function named (kallsyms hides its addresses here)";
  ASSERT_TRUE(std::filesystem::exists(cache)) << "the first recording keeps kallsyms";
  // "spoor-kallsyms 1 BOOT MODULES_BYTES SYMBOLS_BYTES\n", the modules, the symbols.
  std::string file;
  {
    std::ifstream in(cache, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    file = s.str();
  }
  std::istringstream header(file.substr(0, file.find('\n')));
  std::string magic, version, boot;
  size_t modules_bytes = 0, symbols_bytes = 0;
  ASSERT_TRUE(header >> magic >> version >> boot >> modules_bytes >> symbols_bytes) << file.substr(0, 200);
  const size_t body = file.find('\n') + 1;
  const std::string modules = file.substr(body, modules_bytes);
  std::string renamed;
  {
    std::istringstream lines(file.substr(body + modules_bytes));
    std::string line;
    while (std::getline(lines, line)) {
      // "ADDRESS TYPE NAME...": every function becomes cached_NAME, but
      // for the two that bound the kernel's text.
      const size_t name = line.find(' ', line.find(' ') + 1) + 1;
      const bool bound = line.substr(name) == "_stext" || line.substr(name) == "_etext";
      renamed += line.substr(0, name) + (bound ? "" : "cached_") + line.substr(name) + "\n";
    }
  }
  auto write_cache = [&](const std::string& boot_id) {
    std::ofstream(cache, std::ios::binary | std::ios::trunc)
        << magic << " " << version << " " << boot_id << " " << modules.size() << " " << renamed.size() << "\n"
        << modules << renamed;
  };
  write_cache(boot);
  std::map<uint64_t, std::string> second;
  record(&second);
  ASSERT_FALSE(second.empty());
  size_t from_copy = 0;
  for (const auto& [address, name] : second) from_copy += name.rfind("cached_", 0) == 0;
  // Every function in the kernel's text comes from the copy; one outside
  // it (a BPF program, a trampoline) would send the recording back to
  // /proc/kallsyms, which names them all.
  EXPECT_TRUE(from_copy == second.size() || from_copy == 0) << from_copy << " of " << second.size();
  EXPECT_GT(from_copy, 0u) << "the second recording named its functions from the kept copy";

  write_cache(std::string(boot.size(), '0'));  // another boot's
  std::map<uint64_t, std::string> third;
  record(&third);
  for (const auto& [address, name] : third) EXPECT_NE(name.rfind("cached_", 0), 0u) << name;
  std::filesystem::remove_all(dir);
  std::filesystem::remove(path);
}

TEST(KernelRecord, SamplesWithoutFramePointersCarryRegistersAndStack) {
  SKIP_WITHOUT_PERF();
  expect_samples_in_spin_here(SPOOR_SPIN, "--kernel=samples");
}

TEST(KernelRecord, NoPreloadRecordsAStaticProgram) {
  SKIP_WITHOUT_PERF();
  expect_samples_in_spin_here(SPOOR_SPIN_STATIC, "--no-preload --kernel=samples");
}

// A copy larger than one Blob holds (the program has ~48 KiB of live
// stack): the recorder splits it over stack and stack_2.., the first
// field full, so some sample carries more than 16376 bytes in all.
TEST(KernelRecord, AStackCopyLargerThanOneBlobGoesOnInContinuationFields) {
  SKIP_WITHOUT_PERF();
  const std::string path = trace_path("deep");
  const Process p = run(kSpoor + " record --no-preload --kernel=samples --sample-hz 1000 --kernel-stack-size 65528 -o " +
                        path + " -- " + SPOOR_DEEP_SPIN + " 200");
  ASSERT_EQ(p.status, 0) << p.err;
  const Recording r = read_trace(path);
  size_t samples = 0, long_copies = 0, largest = 0;
  for (const KernelEvent& e : r.kernel) {
    if (e.name != "CpuSample" || e.u("regs_abi") == 0) continue;
    ++samples;
    const size_t joined = e.blob("stack") + e.blob("stack_2") + e.blob("stack_3") + e.blob("stack_4");
    if (e.blob("stack_2") > 0) {
      EXPECT_EQ(e.blob("stack"), 16376u) << "only a full first field goes on";
      ++long_copies;
    }
    if (e.blob("stack_3") > 0) {
      EXPECT_EQ(e.blob("stack_2"), 16376u);
    }
    EXPECT_LE(joined, 65528u);
    largest = std::max(largest, joined);
  }
  ASSERT_GE(samples, 50u) << p.err;
  EXPECT_GT(largest, 16376u) << "a copy longer than one Blob";
  EXPECT_GE(long_copies * 2, samples) << "most samples are taken 48 KiB deep";
}

TEST(KernelRecord, PrivilegedTierShowsSchedSwitchForTheProgram) {
  SKIP_WITHOUT_PERF();
  if (geteuid() != 0) GTEST_SKIP() << "the privileged tier needs root or CAP_PERFMON";
  const std::string path = trace_path("sched");
  const Process p = run(kSpoor + " record --no-preload -o " + path + " --kernel=sched -- " + SPOOR_PINGPONG + " 200");
  ASSERT_EQ(p.status, 0) << p.err;
  ASSERT_EQ(p.err.find("unavailable"), std::string::npos) << p.err;
  const Recording r = read_trace(path);
  const uint32_t pid = exec_pid(r, base(SPOOR_PINGPONG));
  ASSERT_NE(pid, 0u);
  const size_t away = count(r, "SchedSwitch", [&](auto& e) { return e.u("prev_pid") == pid; });
  const size_t wakes = count(r, "SchedWaking", [&](auto& e) { return e.u("waker_pid") >= pid; });
  EXPECT_GE(away, 200u) << "the main thread leaves the CPU at each round trip";
  EXPECT_GT(wakes, 0u);
}

TEST(KernelRecord, UnprivilegedTierSamplesAndSaysWhatItCannotHave) {
  SKIP_WITHOUT_PERF();
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to an unprivileged user";
  if (run("setpriv --reuid=65534 --regid=65534 --clear-groups true").status != 0)
    GTEST_SKIP() << "setpriv cannot switch to uid 65534 here";
  const std::string dir = spoor::test::temp_path("unpriv");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  const std::string path = dir + "/t.spoor";
  const std::string as_nobody = "cd " + dir + " && setpriv --reuid=65534 --regid=65534 --clear-groups " + kSpoor;
  const Process p =
      run(as_nobody + " record --no-preload -o " + path + " --kernel=samples,sched -- " + SPOOR_SPIN + " 200");
  if (p.err.find("kernel sources unavailable") != std::string::npos) GTEST_SKIP() << p.err;
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("sched unavailable"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("CAP_PERFMON"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("kernel.perf_event_paranoid="), std::string::npos) << p.err;
  const Recording r = read_trace(path);
  EXPECT_GT(count(r, "CpuSample", [](auto& e) { return e.blob("stack") > 0; }), 20u) << p.err;
  EXPECT_EQ(count(r, "SchedSwitch", [](auto&) { return true; }), 0u);
  // Switches need no privilege: the ping-pong blocks at every round trip.
  const std::string switches_path = dir + "/switches.spoor";
  const Process q =
      run(as_nobody + " record --no-preload -o " + switches_path + " --kernel=switches -- " + SPOOR_PINGPONG + " 100");
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_GE(count(read_trace(switches_path), "ContextSwitch", [](auto& e) { return e.b("out"); }), 100u) << q.err;
  std::filesystem::remove_all(dir);
}

TEST(KernelRecord, UnknownKernelSourceIsAUsageError) {
  const Process p = run(kSpoor + " record --kernel=samples,bogus -- true");
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.err.find("'bogus'"), std::string::npos) << p.err;
  // An option after --kernel is no list: say what --kernel needs.
  const Process q = run(kSpoor + " record --kernel -o /dev/null -- true");
  EXPECT_EQ(q.status, 2);
  EXPECT_NE(q.err.find("--kernel needs a list"), std::string::npos) << q.err;
}

}  // namespace
