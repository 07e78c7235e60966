// The firmware example (examples/firmware) run in QEMU's mps2-an385
// (Cortex-M3): the trace it writes through semihosting is decoded by
// `spoor dump`, its lost count shown by `spoor info` matches what the
// firmware counted, and `spoor symbolize` resolves the program counter an
// event carries. The streaming image writes far more than its buffer holds,
// with nothing lost.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "command_output.h"

namespace spoor::firmware_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using spoor::symbolizer::test::CommandResult;
using spoor::symbolizer::test::run;

const std::string kTool = SPOOR_TOOL;
const std::string kFirmware = FIRMWARE_ELF;
const std::string kStreamingFirmware = FIRMWARE_STREAM_ELF;
const std::string kSourceDir = FIRMWARE_SOURCE_DIR;
const std::string kMissing = FIRMWARE_MISSING;  // why the images were not built, or empty

// What examples/firmware/workload.h promises.
constexpr uint32_t kCountersPerJob = 8;
constexpr uint32_t counter_value(uint32_t index) { return index * 3 + 7; }
constexpr uint32_t kDumpJobs = 24;
constexpr uint32_t kStreamJobs = 3000;
constexpr uint32_t kSysTickException = 15;
// SysTick counts the 25 MHz CPU clock (40 ns a tick) and wraps every 250 us.
constexpr int64_t kNsPerTick = 40;
constexpr int64_t kTickPeriodNs = 250'000;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The "label N" lines the firmware prints over semihosting.
struct FirmwareReport {
  int exit_status = -1;
  std::string console;
  std::map<std::string, uint64_t> numbers;
  std::string pc_site_function;
  uint32_t pc_site_line = 0;
  fs::path trace;

  uint64_t at(const std::string& label) const {
    auto it = numbers.find(label);
    return it == numbers.end() ? ~uint64_t{0} : it->second;
  }
};

// Runs `elf` in QEMU in a fresh directory (the trace lands there) with the
// firmware's options as semihosting arguments; `qemu_options` go before them.
FirmwareReport run_firmware(const std::string& elf, const std::string& name,
                            const std::vector<std::string>& options = {},
                            const std::string& qemu_options = "") {
  const fs::path dir = fs::path(::testing::TempDir()) / ("spoor_firmware_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string semihosting = "enable=on,target=native,arg=" + fs::path(elf).filename().string();
  for (const std::string& o : options) semihosting += ",arg=" + o;
  semihosting += ",arg=--out,arg=" + name + ".spoor";
  const CommandResult r =
      run("cd '" + dir.string() + "' && timeout 300 qemu-system-arm -M mps2-an385 -nographic " +
          "-monitor none -serial none " + qemu_options + " -semihosting-config " + semihosting + " -kernel '" + elf +
          "' < /dev/null 2>&1");
  FirmwareReport report;
  report.exit_status = r.status;
  report.console = r.out;
  report.trace = dir / (name + ".spoor");
  for (const std::string& line : lines(r.out)) {
    if (line.rfind("pc site: ", 0) == 0) {
      std::istringstream in(line.substr(9));
      in >> report.pc_site_function >> report.pc_site_line;
      continue;
    }
    const size_t space = line.find_last_of(' ');
    if (space == std::string::npos || space + 1 == line.size()) continue;
    const std::string value = line.substr(space + 1);
    if (value.find_first_not_of("0123456789") != std::string::npos) continue;
    report.numbers[line.substr(0, space)] = std::stoull(value);
  }
  return report;
}

// `spoor dump --format jsonl`: one object per event.
std::vector<json> dump(const fs::path& trace) {
  // stderr stays apart: only events are JSON.
  const CommandResult r = run(kTool + " dump --format jsonl '" + trace.string() + "'");
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 2000);
  std::vector<json> events;
  for (const std::string& line : lines(r.out)) events.push_back(json::parse(line));
  return events;
}

// The LOST column of stream 0's row in `spoor info`'s streams table:
//     STREAM      PID   CPU   PACKETS      EVENTS        LOST NOTES
//          0        1     0        25         281           0
struct StreamRow {
  uint64_t packets = 0, events = 0, lost = 0;
  bool found = false;
};

StreamRow info_stream_row(const std::string& info) {
  StreamRow row;
  bool in_table = false;
  for (const std::string& line : lines(info)) {
    if (line.find("STREAM") != std::string::npos && line.find("LOST") != std::string::npos) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    std::istringstream in(line);
    uint64_t stream, pid, cpu;
    if (in >> stream >> pid >> cpu >> row.packets >> row.events >> row.lost) row.found = true;
    break;
  }
  return row;
}

std::string info(const fs::path& trace) {
  const CommandResult r = run(kTool + " info '" + trace.string() + "' 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  return r.out;
}

class FirmwareInQemu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kMissing.empty()) GTEST_SKIP() << kMissing;
    if (run("command -v qemu-system-arm >/dev/null").status != 0)
      GTEST_SKIP() << "qemu-system-arm is not installed (scripts/install-cross-deps.sh installs it)";
  }
};

TEST_F(FirmwareInQemu, DumpDecodesEveryEventWithItsFields) {
  const FirmwareReport fw = run_firmware(kFirmware, "dump");
  ASSERT_EQ(fw.exit_status, 0) << fw.console;
  const uint64_t raised = fw.at("raised");
  ASSERT_EQ(fw.at("raised in main"), kDumpJobs * (kCountersPerJob + 3)) << fw.console;
  ASSERT_GT(fw.at("raised in handler"), 0u) << fw.console;
  ASSERT_EQ(fw.at("lost"), 0u) << fw.console;
  ASSERT_EQ(fw.at("written"), raised) << fw.console;

  const std::vector<json> events = dump(fw.trace);
  ASSERT_EQ(events.size(), raised);

  std::map<std::string, std::vector<json>> by_name;
  for (const json& e : events) {
    EXPECT_EQ(e["provider"], "Spoor.Firmware");
    EXPECT_EQ(e["pid"], 1);
    EXPECT_EQ(e["cpu"], 0);
    by_name[e["event"].get<std::string>()].push_back(e);
  }

  // Counters: every index once, each with its known value, raised by main.
  const std::vector<json>& counters = by_name["Counter"];
  ASSERT_EQ(counters.size(), kDumpJobs * kCountersPerJob);
  std::set<uint32_t> indexes;
  std::map<uint32_t, uint64_t> value_of;
  for (const json& c : counters) {
    const uint32_t index = c["fields"]["index"];
    EXPECT_EQ(c["fields"]["value"], counter_value(index)) << c.dump();
    EXPECT_EQ(c["tid"], 0) << "raised from main";
    indexes.insert(index);
  }
  EXPECT_EQ(indexes.size(), counters.size());
  EXPECT_EQ(*indexes.rbegin(), kDumpJobs * kCountersPerJob - 1);

  // The string, once per job.
  ASSERT_EQ(by_name["Message"].size(), kDumpJobs);
  for (const json& m : by_name["Message"]) EXPECT_EQ(m["fields"]["text"], "job done");

  // Jobs: a start and a stop per job sharing an activity ID that no other
  // job uses; the stop's checksum sums the job's counters.
  ASSERT_EQ(by_name["JobStart"].size(), kDumpJobs);
  ASSERT_EQ(by_name["JobStop"].size(), kDumpJobs);
  std::map<uint32_t, json> starts, stops;
  for (const json& s : by_name["JobStart"]) {
    EXPECT_EQ(s["opcode"], "start");
    starts[s["fields"]["job"].get<uint32_t>()] = s;
  }
  for (const json& s : by_name["JobStop"]) {
    EXPECT_EQ(s["opcode"], "stop");
    stops[s["fields"]["job"].get<uint32_t>()] = s;
  }
  std::set<std::string> activities;
  for (uint32_t job = 1; job <= kDumpJobs; ++job) {
    ASSERT_TRUE(starts.count(job) && stops.count(job)) << "job " << job;
    const std::string activity = starts[job]["activity_id"];
    EXPECT_FALSE(activity.empty());
    EXPECT_EQ(stops[job]["activity_id"], activity) << "job " << job;
    EXPECT_LE(starts[job]["time_ns"].get<int64_t>(), stops[job]["time_ns"].get<int64_t>());
    activities.insert(activity);
    uint64_t checksum = 0;
    for (uint32_t i = 0; i < kCountersPerJob; ++i) checksum += counter_value((job - 1) * kCountersPerJob + i);
    EXPECT_EQ(stops[job]["fields"]["checksum"], checksum) << "job " << job;
  }
  EXPECT_EQ(activities.size(), kDumpJobs);

  // Ticks: from the SysTick handler (its exception number is the thread),
  // numbered 1, 2, 3... with none missing.
  const std::vector<json>& ticks = by_name["Tick"];
  ASSERT_EQ(ticks.size(), fw.at("raised in handler"));
  std::set<uint32_t> tick_numbers;
  for (const json& t : ticks) {
    EXPECT_EQ(t["tid"], kSysTickException);
    tick_numbers.insert(t["fields"]["tick"].get<uint32_t>());
  }
  EXPECT_EQ(tick_numbers.size(), ticks.size());
  EXPECT_EQ(*tick_numbers.begin(), 1u);
  EXPECT_EQ(*tick_numbers.rbegin(), ticks.size());

  // The clock: the CLOCK block's 25 MHz turns ticks into nanoseconds, and
  // tick N is raised after SysTick's N-th wrap, so its time is at least N
  // periods (the wraps are counted right).
  for (const json& e : events)
    EXPECT_EQ(e["time_ns"].get<int64_t>(), e["ticks"].get<int64_t>() * kNsPerTick) << e.dump();
  for (const json& t : ticks)
    EXPECT_GE(t["time_ns"].get<int64_t>(), t["fields"]["tick"].get<int64_t>() * kTickPeriodNs) << t.dump();
}

TEST_F(FirmwareInQemu, UnknownOptionEndsWithItsExitCode) {
  // main()'s return value reaches QEMU's exit status through SYS_EXIT_EXTENDED.
  const FirmwareReport fw = run_firmware(kFirmware, "bad_option", {"--frobnicate", "1"});
  EXPECT_EQ(fw.exit_status, 2) << fw.console;
  EXPECT_NE(fw.console.find("cannot use option '--frobnicate'"), std::string::npos) << fw.console;
  EXPECT_FALSE(fs::exists(fw.trace));
}

TEST_F(FirmwareInQemu, InfoShowsTheHookClockAndNoLoss) {
  const FirmwareReport fw = run_firmware(kFirmware, "info");
  ASSERT_EQ(fw.exit_status, 0) << fw.console;
  const std::string text = info(fw.trace);
  EXPECT_NE(text.find("hook at 25.000 MHz"), std::string::npos) << text;
  EXPECT_NE(text.find("32-bit"), std::string::npos) << text;
  const StreamRow row = info_stream_row(text);
  ASSERT_TRUE(row.found) << text;
  EXPECT_EQ(row.events, fw.at("written"));
  EXPECT_EQ(row.packets, fw.at("packets"));
  EXPECT_EQ(row.lost, 0u);
}

TEST_F(FirmwareInQemu, TinyBufferLossMatchesWhatTheFirmwareCounted) {
  // Two packets of 256 bytes: a few dozen events fit, the rest are dropped.
  const FirmwareReport fw = run_firmware(kFirmware, "tiny", {"--buffer", "768"});
  ASSERT_EQ(fw.exit_status, 0) << fw.console;
  const uint64_t lost = fw.at("lost");
  ASSERT_GT(lost, 0u) << fw.console;
  ASSERT_NE(lost, ~uint64_t{0}) << fw.console;
  EXPECT_EQ(fw.at("written") + lost, fw.at("raised"));

  const StreamRow row = info_stream_row(info(fw.trace));
  ASSERT_TRUE(row.found);
  EXPECT_EQ(row.lost, lost);
  EXPECT_EQ(row.events, fw.at("written"));
  EXPECT_EQ(dump(fw.trace).size(), fw.at("written"));
}

TEST_F(FirmwareInQemu, SymbolizeResolvesTheProgramCounterAnEventCarries) {
  const FirmwareReport fw = run_firmware(kFirmware, "symbolize");
  ASSERT_EQ(fw.exit_status, 0) << fw.console;
  ASSERT_EQ(fw.pc_site_function, "run_job") << fw.console;
  // The firmware names the line; check it is the one that takes the pc.
  std::ifstream source(kSourceDir + "/workload.cpp");
  std::string line;
  for (uint32_t n = 0; n < fw.pc_site_line && std::getline(source, line);) ++n;
  ASSERT_NE(line.find("FIRMWARE_CURRENT_PC()"), std::string::npos) << "workload.cpp:" << fw.pc_site_line;

  std::set<std::string> pcs;
  for (const json& e : dump(fw.trace))
    if (e["event"] == "JobStart") pcs.insert(e["fields"]["pc"].get<std::string>());
  ASSERT_EQ(pcs.size(), 1u) << "every job starts at the same place";
  const std::string pc = *pcs.begin();
  ASSERT_EQ(pc.rfind("0x", 0), 0u) << pc;

  const CommandResult r = run(kTool + " symbolize -f -C -e '" + kFirmware + "' " + pc + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 2u) << r.out;
  EXPECT_EQ(out[0], "firmware::run_job(unsigned long)");
  const std::string where = "workload.cpp:" + std::to_string(fw.pc_site_line);
  EXPECT_EQ(out[1].substr(out[1].size() - std::min(out[1].size(), where.size() + 1)), "/" + where)
      << out[1];
}

TEST_F(FirmwareInQemu, StreamingWritesFarMoreThanItsBufferWithoutLoss) {
  // On QEMU's virtual clock (-icount), SysTick counts instructions: with
  // the host's clock, a loaded host that stalls QEMU's CPU thread delivers
  // the ticks it missed at once, more events than the 4 KiB ring holds
  // between two of main's drains, and the test would measure the host.
  const FirmwareReport fw = run_firmware(kStreamingFirmware, "stream", {}, "-icount shift=0");
  ASSERT_EQ(fw.exit_status, 0) << fw.console;
  const uint64_t raised = fw.at("raised");
  ASSERT_EQ(fw.at("raised in main"), kStreamJobs * (kCountersPerJob + 3)) << fw.console;
  EXPECT_EQ(fw.at("lost"), 0u);
  EXPECT_EQ(fw.at("written"), raised);
  // Even at the smallest record (a 10-byte header and no field) the buffer
  // could not have held them all at once.
  const uint64_t buffer_bytes = fw.at("buffer bytes");
  ASSERT_GT(raised * 10, buffer_bytes * 20) << fw.console;

  const StreamRow row = info_stream_row(info(fw.trace));
  ASSERT_TRUE(row.found);
  EXPECT_EQ(row.lost, 0u);
  EXPECT_EQ(row.events, raised);
  EXPECT_GT(fs::file_size(fw.trace), buffer_bytes * 20);

  const std::vector<json> events = dump(fw.trace);
  ASSERT_EQ(events.size(), raised);
  // One stream, so the dump keeps the ring's order: the clock never went
  // backwards across SysTick's wraps.
  int64_t previous_ns = 0;
  for (const json& e : events) {
    const int64_t ns = e["time_ns"];
    ASSERT_GE(ns, previous_ns) << e.dump();
    previous_ns = ns;
  }
  uint64_t counters = 0, next_index = 0;
  for (const json& e : events) {
    if (e["event"] != "Counter") continue;
    ++counters;
    // Main raises the counters in order, and time order keeps it.
    EXPECT_EQ(e["fields"]["index"], next_index);
    EXPECT_EQ(e["fields"]["value"], counter_value(static_cast<uint32_t>(next_index)));
    ++next_index;
  }
  EXPECT_EQ(counters, kStreamJobs * kCountersPerJob);
  // Ticks too, from the handler, numbered without a gap.
  uint64_t next_tick = 1;
  for (const json& e : events) {
    if (e["event"] != "Tick") continue;
    EXPECT_EQ(e["fields"]["tick"], next_tick);
    ++next_tick;
  }
  EXPECT_EQ(next_tick - 1, fw.at("raised in handler"));
}

TEST_F(FirmwareInQemu, BenchModeCountsInstructionsWithTheVirtualClock) {
  // Under -icount shift=0 QEMU runs one instruction per virtual nanosecond
  // and SysTick counts that clock: the firmware's calibration loop of 4000
  // instructions (plus the clock reads' own few) is then 100 ticks of 40 ns,
  // or 101 when it straddles one more tick boundary. (How many instructions
  // an event takes is a figure for bench/RESULTS.md, not checked here.)
  const FirmwareReport fw = run_firmware(kFirmware, "bench", {"--bench", "300", "--packet", "1024"},
                                         "-icount shift=0");
  ASSERT_EQ(fw.exit_status, 0) << fw.console;
  EXPECT_EQ(fw.at("bench events"), 300u) << fw.console;
  const uint64_t calibration = fw.at("bench ticks for 4000 instructions");
  EXPECT_TRUE(calibration == 100 || calibration == 101) << fw.console;
  EXPECT_EQ(fw.at("bench lost"), 0u) << fw.console;
  EXPECT_NE(fw.console.find("bench instructions per event, enabled minus disabled "), std::string::npos)
      << fw.console;
  EXPECT_FALSE(fs::exists(fw.trace)) << "the bench writes no trace";
}

}  // namespace
}  // namespace spoor::firmware_test
