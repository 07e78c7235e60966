// spoor report --kernel's scheduler and block I/O parts (devices by name),
// the sampler's rate (Session), the unwinder's module problems, one row per
// exec'd thread, one row per module file however its path is spelled, the
// export's wakeup flows, and spoor dump's kernel addresses: on hand-built
// traces with Spoor.Kernel events exactly as the schema gives them; and
// spoor record --kernel=sched,block end to end (a ping-pong program, whose
// threads wake each other; the devices' names).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "consumer.h"
#include "kernel_trace.h"
#include "perf_access.h"
#include "run_command.h"

namespace {

using nlohmann::json;
using spoor::test::perf_unavailable;
using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;
constexpr uint32_t kDisk = 8u << 20;  // 8:0

std::string written(spoor::testing::KernelTrace t, const std::string& name) {
  const std::string path = spoor::test::temp_path(name);
  t.save(path);
  return path;
}

// prog (pid 100, threads 100 and 101): 100 sleeps 1000..1800, woken by 101
// at 1500 while hog (500) runs; 101 sleeps in D 3000..4000 reading 4 KiB
// (issued 3000, complete 3900); hog writes 8 KiB (5000 -> 5500). Two
// samples at 997 Hz, one with registers in a module whose file is gone.
spoor::testing::KernelTrace sched_trace() {
  spoor::testing::KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.thread_start(100, 101, 2, 100);
  t.session(3, 997, "cpu-clock", "samples,sched,block");
  t.sched_switch(1000, 0, 100, "prog", 0x1, 500, "hog");
  t.sched_waking(1500, 1, 101, 100, "prog");
  t.sched_switch(1800, 0, 500, "hog", 0x100, 100, "prog");
  t.block_request(3000, 101, kDisk, 100, 4096, "R", true);
  t.sched_switch(3000, 1, 101, "prog", 0x2, 0, "swapper/1");
  t.block_request(3900, 0, kDisk, 100, 4096, "R", false);
  t.sched_waking(3900, 1, 0, 101, "prog");
  t.sched_switch(4000, 1, 0, "swapper/1", 0, 101, "prog");
  t.block_request(5000, 500, kDisk, 200, 8192, "WS", true);
  t.block_request(5500, 0, kDisk, 200, 8192, "WS", false);
  // perf_regs.h x86-64: SP is bit 7, IP bit 8.
  t.cpu_sample(100, 100, 5600, 0x401010, (1u << 7) | (1u << 8), {0x7ffd0000, 0x401010}, spoor::testing::Bytes(64, 0),
               {});
  t.cpu_sample(100, 100, 5700, 0x401010, 0, {}, {}, {0x401010, 0x402020});
  t.tick(100, 100, 6000);
  return t;
}

const json* with_tid(const json& list, uint64_t tid) {
  for (const json& x : list)
    if (x["tid"] == tid) return &x;
  return nullptr;
}

TEST(KernelSchedReport, WakersOffCpuReasonsAndWhatRanInstead) {
  const std::string path = written(sched_trace(), "kernel-sched-report.spoor");
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json k = json::parse(p.out)["kernel"];
  ASSERT_TRUE(k.contains("sched")) << p.out;
  const json* main = with_tid(k["sched"]["threads"], 100);
  const json* worker = with_tid(k["sched"]["threads"], 101);
  ASSERT_NE(main, nullptr) << p.out;
  ASSERT_NE(worker, nullptr) << p.out;
  EXPECT_EQ((*main)["pid"], 100u);
  EXPECT_EQ((*main)["off_cpu_by_reason_ns"]["sleeping"], 800);
  EXPECT_EQ((*worker)["off_cpu_by_reason_ns"]["disk_sleep"], 1000);
  ASSERT_EQ((*main)["wakers"].size(), 1u);
  EXPECT_EQ((*main)["wakers"][0]["tid"], 101u);
  EXPECT_EQ((*main)["wakers"][0]["pid"], 100u) << "a traced thread: its process is named";
  EXPECT_EQ((*main)["wakers"][0]["traced"], true);
  EXPECT_EQ((*main)["waiting_ns"], 300);
  ASSERT_EQ((*main)["ran_instead"].size(), 1u);
  EXPECT_EQ((*main)["ran_instead"][0]["comm"], "hog");
  EXPECT_EQ((*main)["ran_instead"][0]["ns"], 300);

  const Process text = run(kSpoor + " report --kernel " + path);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("woken by: prog (101, traced) 1x"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ran instead while it waited to run: hog (500) 300 ns"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

TEST(KernelSchedReport, BlockRequestsPerDeviceAndIssuer) {
  const std::string path = written(sched_trace(), "kernel-block-report.spoor");
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json k = json::parse(p.out)["kernel"];
  ASSERT_TRUE(k.contains("block")) << p.out;
  ASSERT_EQ(k["block"]["devices"].size(), 1u);
  const json& d = k["block"]["devices"][0];
  EXPECT_EQ(d["device"], "8:0");
  EXPECT_EQ(d["requests"], 2u);
  EXPECT_EQ(d["read_bytes"], 4096u);
  EXPECT_EQ(d["write_bytes"], 8192u);
  EXPECT_EQ(d["mean_ns"], 700);
  EXPECT_EQ(d["max_ns"], 900);
  const json* worker = with_tid(k["block"]["issuers"], 101);
  const json* hog = with_tid(k["block"]["issuers"], 500);
  ASSERT_NE(worker, nullptr);
  ASSERT_NE(hog, nullptr);
  EXPECT_EQ((*worker)["traced"], true);
  EXPECT_EQ((*hog)["comm"], "hog") << "named from the scheduler's records";
  EXPECT_EQ((*hog)["traced"], false);

  const Process text = run(kSpoor + " report --kernel " + path);
  EXPECT_NE(text.out.find("block I/O requests (block_rq_issue -> block_rq_complete), per device"), std::string::npos)
      << text.out;
  std::filesystem::remove(path);
}

// The recorder names the devices it found in sysfs (BlockDevice): the
// report shows "sda (8:0)" as iostat does; traces without one keep 8:0.
TEST(KernelSchedReport, BlockDevicesAreShownByNameAndMajorMinor) {
  spoor::testing::KernelTrace t = sched_trace();
  t.block_device(3, kDisk, "sda");
  const std::string path = written(t, "kernel-block-names.spoor");
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json d = json::parse(p.out)["kernel"]["block"]["devices"][0];
  EXPECT_EQ(d["device"], "sda (8:0)");
  EXPECT_EQ(d["name"], "sda");
  EXPECT_EQ(d["major_minor"], "8:0");
  const Process text = run(kSpoor + " report --kernel " + path);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("sda (8:0)"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

// On a machine with block devices, a recording with the block source
// names them (the names come from sysfs, at record time).
TEST(KernelSchedRecord, TheRecorderNamesTheBlockDevices) {
  SKIP_WITHOUT_PERF();
  std::error_code ec;
  if (std::filesystem::is_empty("/sys/dev/block", ec) || ec) GTEST_SKIP() << "no /sys/dev/block here";
  const std::string path = spoor::test::temp_path("kernel-block-names-record.spoor");
  const Process rec = run(kSpoor + " record --no-preload --kernel=block -o " + path + " -- true");
  ASSERT_EQ(rec.status, 0) << rec.err;
  if (rec.err.find("block unavailable") != std::string::npos)
    GTEST_SKIP() << "the block tracepoints are unavailable here (they need root or CAP_PERFMON): " << rec.err;
  const Process d = run(kSpoor + " dump --format jsonl " + path);
  ASSERT_EQ(d.status, 0) << d.err;
  size_t named = 0;
  for (size_t at = 0, next; at < d.out.size(); at = next + 1) {
    next = d.out.find('\n', at);
    if (next == std::string::npos) next = d.out.size();
    if (next == at) continue;
    const json e = json::parse(d.out.substr(at, next - at));
    if (e["event"] == "BlockDevice" && !e["fields"]["name"].get<std::string>().empty()) ++named;
  }
  EXPECT_GE(named, 1u) << rec.err;
  std::filesystem::remove(path);
}

// The merged /usr: one library as /lib/... in one process and /usr/lib/...
// in another (one build ID) is one row of the module problems.
TEST(KernelSchedReport, OneLibraryUnderTwoSpellingsIsOneModuleRow) {
  const spoor::testing::Bytes id = {0x6c, 0x69, 0x62, 0x63, 0x0a, 0x0b, 0x0c, 0x0d};
  spoor::testing::KernelTrace t;
  t.process(100, 1, "a", {"a"});
  t.process(200, 1, "b", {"b"});
  t.module_load(100, 10, 0x7f0000000000, 0x7f0000000000, 0x200000, "/nonexistent/lib/libc.so.6", id);
  t.module_load(200, 10, 0x7f1000000000, 0x7f1000000000, 0x200000, "/nonexistent/usr/lib/libc.so.6", id);
  t.sampler_start(100, 11, 1000);
  t.stack(100, 12, 1, {0x7f0000001234, 0x7f0000005678});
  t.stack(200, 12, 1, {0x7f1000001234});
  t.sample(100, 100, 20, 1, 1);
  t.sample(200, 200, 20, 1, 1);
  const std::string path = written(t, "kernel-usrmerge.spoor");
  const Process p = run(kSpoor + " report --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json problems = json::parse(p.out)["health"]["symbol_problems"];
  ASSERT_EQ(problems.size(), 1u) << problems;
  EXPECT_EQ(problems[0]["module"], "/nonexistent/lib/libc.so.6") << "the first spelling seen";
  std::filesystem::remove(path);
}

TEST(KernelSchedReport, SampleRateUnwindProblemsAndTheNoteForOlderTraces) {
  const std::string path = written(sched_trace(), "kernel-session-report.spoor");
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json cpu = json::parse(p.out)["kernel"]["cpu"];
  EXPECT_EQ(cpu["sample_hz"], 997u);
  EXPECT_EQ(cpu["sample_event"], "cpu-clock");
  EXPECT_EQ(cpu["period_ns"], 1'000'000'000 / 997);
  ASSERT_EQ(cpu["unwind_problems"].size(), 1u) << "once, though two samples ran in it";
  EXPECT_EQ(cpu["unwind_problems"][0]["module"], "/nonexistent/prog");
  EXPECT_NE(cpu["unwind_problems"][0]["message"].get<std::string>().find("cannot open"), std::string::npos);
  const Process text = run(kSpoor + " report --kernel " + path);
  EXPECT_NE(text.out.find("one sample stands for 1.003 ms of CPU time (cpu-clock at 997 Hz)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("modules the unwinder could not use"), std::string::npos) << text.out;
  std::filesystem::remove(path);

  spoor::testing::KernelTrace old;
  old.process(100, 1, "prog", {"prog"});
  old.cpu_sample(100, 100, 10, 0x401010, 0, {}, {}, {0x401010});
  const std::string old_path = written(old, "kernel-no-session.spoor");
  const Process o = run(kSpoor + " report --kernel " + old_path);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("CPU time per sample unknown"), std::string::npos) << o.out;
  std::filesystem::remove(old_path);
}

// The model has a thread per image: a pid that exec'd is still one row,
// with both names.
TEST(KernelSchedReport, AThreadThatExecdIsOneRowWithItsImages) {
  spoor::testing::KernelTrace t;
  t.process(100, 1, "sh", {"sh", "-c", "exec prog"});
  t.process_start(100, 1, 1, 0, "/bin/sh");
  t.thread_start(100, 100, 2, 0);  // the preload's, in each image
  t.context_switch(100, 100, 10, true, false);
  t.context_switch(100, 100, 30, false, false);
  t.comm(100, 100, 40, "prog", true);
  t.exec_block(100, 1, "prog", {"prog"});
  t.process_start(100, 50, 1, 1, "/bin/prog");
  t.thread_start(100, 100, 51, 0);
  t.context_switch(100, 100, 60, true, false);
  t.context_switch(100, 100, 100, false, false);
  const std::string path = written(t, "kernel-exec-row.spoor");
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json k = json::parse(p.out)["kernel"];
  size_t rows = 0;
  for (const json& th : k["threads"])
    if (th["tid"] == 100u) {
      ++rows;
      EXPECT_EQ(th["switches"], 2u);
      EXPECT_EQ(th["off_cpu_ns"], 60);
      EXPECT_EQ(th["images"], json::array({"sh", "prog"}));
    }
  EXPECT_EQ(rows, 1u) << p.out;
  const Process text = run(kSpoor + " report --kernel " + path);
  EXPECT_NE(text.out.find("sh -> exec -> prog"), std::string::npos) << "the images' exe names: " << text.out;
  std::filesystem::remove(path);
}

TEST(KernelDump, AddressesAndCallchainsPrintInHex) {
  const std::string path = written(sched_trace(), "kernel-dump.spoor");
  const Process p = run(kSpoor + " dump " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("ip=0x401010"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("callchain=[0x401010,0x402020]"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("start=0x400000"), std::string::npos) << "ModuleLoad's Ptr, for comparison";
  const Process j = run(kSpoor + " dump --format jsonl " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  bool seen = false;
  for (size_t at = 0, next; at < j.out.size(); at = next + 1) {
    next = j.out.find('\n', at);
    if (next == std::string::npos) next = j.out.size();
    const json e = json::parse(j.out.substr(at, next - at));
    if (e["event"] != "CpuSample" || e["fields"]["callchain"].empty()) continue;
    EXPECT_EQ(e["fields"]["ip"], "0x401010");
    EXPECT_EQ(e["fields"]["callchain"], json::array({"0x401010", "0x402020"}));
    seen = true;
  }
  EXPECT_TRUE(seen);
  std::filesystem::remove(path);
}

TEST(KernelSchedExport, ChromeJsonHasWakeupsOffCpuReasonsBlockRequestsAndWakeupFlows) {
  const std::string path = written(sched_trace(), "kernel-sched-export.spoor");
  const std::string out = spoor::test::temp_path("kernel-sched-export.json");
  const Process p = run(kSpoor + " export " + path + " --format chrome -o " + out);
  ASSERT_EQ(p.status, 0) << p.err;
  const json doc = json::parse(spoor::test::read_file(out));
  size_t woken = 0, sleeping = 0, disk = 0, blocks = 0, blocked = 0;
  for (const json& e : doc["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (name == "woken by prog (101)" && e["ph"] == "i" && e["tid"] == 100) ++woken;
    if (name == "off-CPU (sleeping)" && e["ph"] == "B") ++sleeping;
    if (name == "off-CPU (disk sleep)" && e["ph"] == "B" && e["tid"] == 101) ++disk;
    if (name == "block R 4096 B" && e["ph"] == "B" && e["tid"] == 101) ++blocks;
    if (name.starts_with("off-CPU (blocked)")) ++blocked;
  }
  EXPECT_EQ(woken, 1u) << "on the woken thread, at the wakeup";
  EXPECT_EQ(sleeping, 1u);
  EXPECT_EQ(disk, 1u);
  EXPECT_EQ(blocks, 1u) << "on the traced thread that issued it; hog's request is not on the timeline";
  EXPECT_EQ(blocked, 0u) << "no switch records in this trace";

  // The one wakeup by a traced thread (101 woke 100 at 1500 ns; 100 ran at
  // 1800 ns) is a flow from 101's track to 100's; 101's wakeup by the idle
  // task (untraced) has none.
  std::vector<json> out_events, in_events;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("flow_out", false)) out_events.push_back(e);
    if (e.value("flow_in", false)) in_events.push_back(e);
  }
  ASSERT_EQ(out_events.size(), 1u) << doc.dump();
  ASSERT_EQ(in_events.size(), 1u) << doc.dump();
  EXPECT_EQ(out_events[0]["tid"], 101) << "starts on the waker's thread";
  EXPECT_DOUBLE_EQ(out_events[0]["ts"].get<double>(), 1.5) << "at the wakeup (us)";
  EXPECT_EQ(out_events[0]["name"], "wakes prog (100)");
  EXPECT_EQ(in_events[0]["tid"], 100) << "ends on the woken thread";
  EXPECT_DOUBLE_EQ(in_events[0]["ts"].get<double>(), 1.8) << "where it next ran";
  EXPECT_EQ(out_events[0]["bind_id"], in_events[0]["bind_id"]);
  std::filesystem::remove(out);
  std::filesystem::remove(path);
}

// Records the ping-pong program (`rounds` round trips) with CPU samples
// and the scheduler's records into `path`. "" when it did; else why not,
// for the test to skip (a failed recording is a failure besides).
std::string record_pingpong_with_sched(const std::string& path, int rounds) {
  if (std::string why = perf_unavailable(); !why.empty()) return why;
  const Process rec =
      run(kSpoor + " record --kernel=samples,sched -o " + path + " -- " + SPOOR_PINGPONG + " " + std::to_string(rounds));
  if (rec.status != 0) {
    ADD_FAILURE() << "spoor record failed: " << rec.err;
    return "spoor record failed";
  }
  if (rec.err.find("sched unavailable") != std::string::npos || rec.err.find("sched (") != std::string::npos)
    return "the scheduler's tracepoints are unavailable here (they need root or CAP_PERFMON): " + rec.err;
  return "";
}

// Every stream of a recording with the machine-wide sched events (on
// before the program's exec) reads in time order: the Session and snapshot
// records, stamped at the exec, are not in a CPU's stream ahead of the
// older records drained from its ring (which held those records back in
// the reader's merge, behind other CPUs' later ones); and a CPU's records
// are written sorted, although the kernel's ring is not quite (time_order.h).
TEST(KernelSchedRecord, EveryStreamIsInTimeOrder) {
  const std::string path = spoor::test::temp_path("kernel-sched-order.spoor");
  if (const std::string why = record_pingpong_with_sched(path, 100); !why.empty()) GTEST_SKIP() << why;
  const Process dump = run(kSpoor + " dump --format jsonl " + path);
  ASSERT_EQ(dump.status, 0) << dump.err;
  std::map<uint64_t, int64_t> last;  // stream -> its latest time so far
  std::istringstream lines(dump.out);
  size_t kernel = 0, sessions = 0;
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line);
    if (e["provider"] != "Spoor.Kernel") continue;
    ++kernel;
    sessions += e["event"] == "Session";
    const uint64_t stream = e["stream"];
    const int64_t t = e["time_ns"];
    if (last.count(stream)) {
      EXPECT_GE(t, last[stream]) << "stream " << stream << " goes back: " << line;
    }
    last[stream] = std::max(last[stream], t);
  }
  EXPECT_GT(kernel, 10u);
  EXPECT_EQ(sessions, 1u);
  std::filesystem::remove(path);
}

// Two threads passing a byte over pipes: a thread blocked in read() is
// woken by the other's write, so its waker is its partner.
TEST(KernelSchedRecord, PingPongThreadsAreEachOthersWakers) {
  const std::string path = spoor::test::temp_path("kernel-sched-pingpong.spoor");
  if (const std::string why = record_pingpong_with_sched(path, 300); !why.empty()) GTEST_SKIP() << why;
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json k = json::parse(p.out)["kernel"];
  ASSERT_TRUE(k.contains("sched")) << p.out;
  EXPECT_NE(k["sources"].get<std::string>().find("sched"), std::string::npos) << k["sources"];
  EXPECT_GT(k["cpu"]["sample_hz"].get<uint64_t>(), 0u) << "the Session event names the rate";
  // The program's two threads: the one with the most wakeups and its
  // partner (same pid, the other tid).
  const json* a = nullptr;
  for (const json& t : k["sched"]["threads"])
    if (a == nullptr || t["wakeups"].get<uint64_t>() > (*a)["wakeups"].get<uint64_t>()) a = &t;
  ASSERT_NE(a, nullptr) << p.out;
  ASSERT_GE((*a)["wakeups"].get<uint64_t>(), 10u) << p.out;
  // Its partner: the program's other thread. When both run on one CPU, the
  // woken peer can preempt the writer and answer before the writer reads,
  // so the writer never sleeps: only one side is then woken by the other.
  // The thread woken most is always woken by its partner; the partner, if a
  // traced thread woke it at all, was woken by the first.
  const json* b = nullptr;
  for (const json& t : k["sched"]["threads"])
    if (t["pid"] == (*a)["pid"] && t["tid"] != (*a)["tid"]) b = &t;
  ASSERT_NE(b, nullptr) << "the partner thread is in the table: " << p.out;
  ASSERT_FALSE((*a)["wakers"].empty());
  const json& top = (*a)["wakers"][0];
  EXPECT_EQ(top["tid"], (*b)["tid"]) << "the partner wakes it most: " << (*a)["wakers"];
  EXPECT_EQ(top["traced"], true);
  EXPECT_GE(top["count"].get<uint64_t>(), (*a)["wakeups"].get<uint64_t>() / 2) << (*a)["wakers"];
  EXPECT_GT((*a)["off_cpu_by_reason_ns"]["sleeping"].get<int64_t>(), 0) << "blocked in read()";
  for (const json& w : (*b)["wakers"]) {
    if (w["traced"] == true) {
      EXPECT_EQ(w["tid"], (*a)["tid"]) << (*b)["wakers"];
    }
  }
  std::filesystem::remove(path);
}

}  // namespace
