// Runs of block and line calls end to end: programs/stdio_runs.c, built as
// written (-O0) and fortified (-O2 _FORTIFY_SOURCE=2), runs under spoor
// record. A loop of fwrite, fprintf, fputs, fgets, fread or getline calls
// at one call site must be one FWriteRun or FReadRun with the loop's calls
// and bytes; two sites in one loop two runs; a failed call and a blocked
// one FWrite events of their own; the report must count the program's
// calls and bytes; and the program's output must not change.
//
// A call that the machine's load stretches past the shim's 20 us threshold
// is written on its own, after the thread's pending runs: that splits the
// run of every site of the loop in two. The tests count the calls and bytes
// per call site over runs and single events together, and allow one split
// per single event on the stream (none happen on a quiet machine).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "event_fields.h"
#include "io_report_rows.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;
namespace fs = std::filesystem;
using spoor::test::Process;
using spoor::test::run;
using spoor::test::temp_path;
using namespace spoor::test::fields;  // i64, u64, ptr, str

const std::string kSpoor = SPOOR_TOOL;
constexpr int64_t kCalls = 1000, kBig = 256 * 1024;
constexpr int64_t kSleptNs = 50'000'000;  // the reader sleeps 60 ms: at least this, whatever the clock's error
// FWriteRun's and FReadRun's `call` (io_provider.h's kIoStdio*).
constexpr uint64_t kFwrite = 0, kFputs = 1, kPrintf = 3, kFread = 4, kFgets = 5, kGetline = 6;

// The calls of one call site (one stack) on one file, over its runs and
// its single events.
struct Site {
  uint64_t call = UINT64_MAX;  // the runs' function; UINT64_MAX when there is no run
  int64_t runs = 0, singles = 0, calls = 0, bytes = 0;
};

struct Single {  // an FWrite or FRead
  int64_t result = 0;
  int64_t duration_ns = 0;
};

struct Stream {
  std::map<uint64_t, Site> write_sites, read_sites;  // by stack ID
  std::vector<Single> writes, reads;
  int64_t write_runs = 0, read_runs = 0;
};

struct Replay {
  std::map<std::string, Stream> files;  // by base name; "stdout"; "fdopen 1", "fdopen 2" for the pipes
  int unattributed = 0;
  int bad_spans = 0;  // runs whose busy time is outside their span, or span outside their record
};

Replay replay(const std::string& path) {
  Replay r;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return r;
  const auto& clock = trace.value().clock();
  std::map<uint64_t, std::string> streams;
  int fdopens = 0;
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.provider->name != "Spoor.IO") continue;
    const std::string& name = e.descriptor->name;
    if (name == "FOpen" && ptr(e, "stream") != 0) {
      streams[ptr(e, "stream")] = base_name(str(e, "path"));
      continue;
    }
    if (name == "FDOpen" && ptr(e, "stream") != 0) {
      streams[ptr(e, "stream")] = "fdopen " + std::to_string(++fdopens);
      continue;
    }
    if (name == "FClose") {
      streams.erase(ptr(e, "stream"));
      continue;
    }
    const bool run = name == "FWriteRun" || name == "FReadRun";
    if (!run && name != "FWrite" && name != "FRead") continue;
    Stream* s = nullptr;
    if (i64(e, "fd") == 1) {
      s = &r.files["stdout"];
    } else if (auto it = streams.find(ptr(e, "stream")); it != streams.end()) {
      s = &r.files[it->second];
    } else {
      ++r.unattributed;
      continue;
    }
    const bool output = name == "FWriteRun" || name == "FWrite";
    Site& site = (output ? s->write_sites : s->read_sites)[u64(e, "stack")];
    const int64_t result = i64(e, "result");
    if (run) {
      const uint64_t start = u64(e, "start_ticks"), end = u64(e, "end_ticks"), busy = u64(e, "busy_ticks");
      if (start == 0 || end < start || end > e.ticks || busy > end - start || busy == 0) ++r.bad_spans;
      site.call = u64(e, "call");
      ++site.runs;
      site.calls += static_cast<int64_t>(u64(e, "calls"));
      site.bytes += result;
      ++(output ? s->write_runs : s->read_runs);
    } else {
      ++site.singles;
      ++site.calls;
      site.bytes += std::max<int64_t>(result, 0);
      (output ? s->writes : s->reads)
          .push_back(Single{result, e.time_ns - clock.to_ns(u64(e, "start_ticks"))});
    }
  }
  return r;
}

// The one site of `sites` whose runs are of function `call`.
const Site* site_of(const std::map<uint64_t, Site>& sites, uint64_t call) {
  const Site* found = nullptr;
  for (const auto& [stack, site] : sites) {
    if (site.call != call) continue;
    EXPECT_EQ(found, nullptr) << "two sites with runs of call " << call;
    found = &site;
  }
  return found;
}

// A loop's site: its calls and bytes, in one run unless load stretched
// some calls on the stream past the threshold (each such call a single
// event, which ends the pending runs). splits: the single events of the
// stream.
void expect_loop(const Site* site, uint64_t call, int64_t calls, int64_t bytes, const std::string& what,
                 size_t splits) {
  ASSERT_NE(site, nullptr) << what << ": no run";
  EXPECT_EQ(site->call, call) << what;
  EXPECT_EQ(site->calls, calls) << what;
  EXPECT_EQ(site->bytes, bytes) << what;
  EXPECT_GE(site->runs, 1) << what;
  EXPECT_LE(site->runs, 1 + static_cast<int64_t>(splits)) << what << ": a run ends only at another event";
  EXPECT_LT(site->singles, calls / 10) << what << ": the loop's calls are folded";
}

class IoStdioRuns : public ::testing::TestWithParam<bool> {  // fortified?
 protected:
  void SetUp() override {
    dir_ = temp_path("stdio-runs-" + std::to_string(GetParam()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string program() const { return GetParam() ? SPOOR_STDIO_RUNS_FORTIFY : SPOOR_STDIO_RUNS; }
  std::string command() const { return program() + " " + dir_; }

  Process record(const std::string& trace) { return run(kSpoor + " record -o " + trace + " -- " + command()); }

  std::string dir_;
};

TEST_P(IoStdioRuns, TheProgramCallsTheFunctionsUnderTest) {
  std::vector<std::string> expected = {"fwrite", "fputs"};
  if (GetParam()) {
    for (const char* fn : {"__fprintf_chk", "__printf_chk", "__fgets_chk", "__fread_chk", "__getdelim"})
      expected.emplace_back(fn);
  } else {
    for (const char* fn : {"fprintf", "printf", "fgets", "fread", "getline"}) expected.emplace_back(fn);
  }
  EXPECT_EQ(spoor::test::missing_imports(program(), expected), std::vector<std::string>{});
}

TEST_P(IoStdioRuns, ALoopAtOneSiteIsOneRunWithItsCallsAndBytes) {
  const std::string trace = dir_ + ".spoor";
  const Process traced = record(trace);
  ASSERT_EQ(traced.status, 0) << traced.err;
  const Replay r = replay(trace);
  fs::remove(trace);
  EXPECT_EQ(r.unattributed, 0);
  EXPECT_EQ(r.bad_spans, 0) << "a run's busy time is inside its span, its span before its record";

  const Stream& written = r.files.at("fwrite.txt");
  ASSERT_EQ(written.write_sites.size(), 1u);
  expect_loop(site_of(written.write_sites, kFwrite), kFwrite, kCalls, 10 * kCalls, "fwrite", written.writes.size());
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(dir_ + "/fwrite.txt")), 10 * kCalls);

  const Stream& formatted = r.files.at("fprintf.txt");
  const size_t splits = formatted.writes.size() + formatted.reads.size();
  expect_loop(site_of(formatted.write_sites, kPrintf), kPrintf, kCalls, 9 * kCalls, "fprintf", splits);
  // Read back three times; each loop's last call finds the end of the
  // file: an FRead of its own, 0 bytes.
  expect_loop(site_of(formatted.read_sites, kFgets), kFgets, kCalls + 1, 9 * kCalls, "fgets", splits);
  expect_loop(site_of(formatted.read_sites, kFread), kFread, kCalls + 1, 9 * kCalls, "fread", splits);
  expect_loop(site_of(formatted.read_sites, kGetline), kGetline, kCalls + 1, 9 * kCalls, "getline", splits);
  int at_end = 0;
  for (const Single& s : formatted.reads) at_end += s.result == 0;
  EXPECT_EQ(at_end, 3) << "the ends of the file are single FReads";

  // stdout: the printf loop, then four summary lines from four sites.
  const Stream& out = r.files.at("stdout");
  int64_t out_bytes = 0;
  for (const auto& [stack, site] : out.write_sites) out_bytes += site.bytes;
  EXPECT_EQ(out_bytes, static_cast<int64_t>(traced.out.size()));
  const Site* loop = nullptr;
  for (const auto& [stack, site] : out.write_sites)
    if (site.calls == kCalls) loop = &site;
  expect_loop(loop, kPrintf, kCalls, 9 * kCalls, "printf", out.writes.size());
  EXPECT_EQ(out.write_sites.size(), 5u) << "the loop's site and the four summary lines'";
}

TEST_P(IoStdioRuns, TwoInterleavedSitesAreTwoRuns) {
  const std::string trace = dir_ + ".spoor";
  ASSERT_EQ(record(trace).status, 0);
  const Replay r = replay(trace);
  fs::remove(trace);
  const Stream& s = r.files.at("interleaved.txt");
  ASSERT_EQ(s.write_sites.size(), 2u) << "two fputs sites";
  std::vector<int64_t> bytes;
  for (const auto& [stack, site] : s.write_sites) {
    expect_loop(&site, kFputs, kCalls, site.bytes, "fputs", s.writes.size());
    bytes.push_back(site.bytes);
  }
  std::sort(bytes.begin(), bytes.end());
  EXPECT_EQ(bytes, std::vector<int64_t>({2 * kCalls, 3 * kCalls}));
  EXPECT_LE(s.write_runs, 2 * (1 + static_cast<int64_t>(s.writes.size())))
      << "the two runs stay pending side by side while the calls alternate";
}

TEST_P(IoStdioRuns, FailedCallsAreEventsOfTheirOwnWithTheirErrno) {
  const std::string trace = dir_ + ".spoor";
  const Process traced = record(trace);
  ASSERT_EQ(traced.status, 0) << traced.err;
  const Replay r = replay(trace);
  fs::remove(trace);
  EXPECT_NE(traced.out.find("read-only fwrite: 0, errno EBADF"), std::string::npos) << traced.out;
  EXPECT_NE(traced.out.find("fputs to a closed pipe: EOF, errno EPIPE"), std::string::npos) << traced.out;
  std::vector<int64_t> failed;
  for (const Single& s : r.files.at("fprintf.txt").writes)
    if (s.result < 0) failed.push_back(s.result);
  EXPECT_EQ(failed, std::vector<int64_t>({-EBADF})) << "fwrite to a read-only stream";
  const Stream& pipe = r.files.at("fdopen 1");
  ASSERT_EQ(pipe.writes.size(), 1u);
  EXPECT_EQ(pipe.writes[0].result, -EPIPE) << "fputs to a pipe without a reader";
  EXPECT_EQ(pipe.write_runs, 0);
}

TEST_P(IoStdioRuns, ABlockedCallIsAnEventWithItsDuration) {
  const std::string trace = dir_ + ".spoor";
  const Process traced = record(trace);
  ASSERT_EQ(traced.status, 0) << traced.err;
  const Replay r = replay(trace);
  fs::remove(trace);
  EXPECT_NE(traced.out.find("blocked fwrite: 262144, reader 0"), std::string::npos) << traced.out;
  const Stream& pipe = r.files.at("fdopen 2");
  ASSERT_EQ(pipe.writes.size(), 1u);
  EXPECT_EQ(pipe.writes[0].result, kBig);
  EXPECT_GE(pipe.writes[0].duration_ns, kSleptNs) << "blocked until the reader woke";
  EXPECT_EQ(pipe.write_runs, 0);
}

TEST_P(IoStdioRuns, TheReportCountsTheProgramsCallsAndBytes) {
  const std::string trace = dir_ + ".spoor";
  ASSERT_EQ(record(trace).status, 0);
  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, true);
  fs::remove(trace);
  ASSERT_EQ(rows.failure, "");
  auto& files = rows.files;
  const nlohmann::json& j = rows.report;
  ASSERT_TRUE(files.count("fwrite.txt"));
  EXPECT_EQ(files["fwrite.txt"]["writes"], kCalls);
  EXPECT_EQ(files["fwrite.txt"]["bytes_written"], 10 * kCalls);
  EXPECT_EQ(files["interleaved.txt"]["writes"], 2 * kCalls);
  EXPECT_EQ(files["interleaved.txt"]["bytes_written"], 5 * kCalls);
  EXPECT_EQ(files["fprintf.txt"]["writes"], kCalls + 1) << "the loop and the failed fwrite";
  EXPECT_EQ(files["fprintf.txt"]["bytes_written"], 9 * kCalls);
  EXPECT_EQ(files["fprintf.txt"]["reads"], 3 * (kCalls + 1));
  EXPECT_EQ(files["fprintf.txt"]["bytes_read"], 3 * 9 * kCalls);
  EXPECT_EQ(files["fprintf.txt"]["errors"], 1);
  // The slowest calls are single calls, the blocked fwrite first.
  ASSERT_FALSE(j["io"]["slowest"].empty()) << j.dump();
  for (const auto& op : j["io"]["slowest"]) {
    const std::string call = op["call"];
    EXPECT_EQ(call.find("Run"), std::string::npos) << "a run is no call: " << op.dump();
  }
  EXPECT_EQ(j["io"]["slowest"][0]["call"], "FWrite");
  EXPECT_GE(j["io"]["slowest"][0]["duration_ns"].get<int64_t>(), kSleptNs);
}

TEST_P(IoStdioRuns, TheExportNamesARunByItsFunctionAndCalls) {
  const std::string trace = dir_ + ".spoor";
  ASSERT_EQ(record(trace).status, 0);
  const Process exported = run(kSpoor + " export " + trace + " --format chrome");
  fs::remove(trace);
  ASSERT_EQ(exported.status, 0) << exported.err;
  const auto j = nlohmann::json::parse(exported.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  // Calls per function, from slice names "fwrite x1000": only the loops'
  // calls are in runs (the failed and blocked calls are FWrite slices, and
  // so is a loop's call over the threshold: often its first, which
  // allocates the stream's buffer).
  std::map<std::string, int64_t> calls;
  for (const auto& e : j["traceEvents"]) {
    const std::string name = e.value("name", "");
    const size_t x = name.find(" x");
    if (e.value("cat", "") == "io" && e.value("ph", "") == "B" && x != std::string::npos)
      calls[name.substr(0, x)] += std::stoll(name.substr(x + 2));
  }
  for (const auto& [function, expected] : std::map<std::string, int64_t>{{"fwrite", kCalls}, {"fputs", 2 * kCalls},
                                                                         {"fgets", kCalls}, {"getline", kCalls}}) {
    EXPECT_LE(calls[function], expected) << function;
    EXPECT_GT(calls[function], expected * 9 / 10) << function << "\n" << exported.out.substr(0, 2000);
  }
}

TEST_P(IoStdioRuns, OutputIsByteIdenticalTracedAndUntraced) {
  const Process plain = run(command());
  ASSERT_EQ(plain.status, 0) << plain.err;
  const std::string trace = dir_ + ".spoor";
  const Process traced = record(trace);
  fs::remove(trace);
  ASSERT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out.size(), plain.out.size());
  EXPECT_TRUE(traced.out == plain.out);
  EXPECT_NE(plain.out.find("fgets 1001 fread 1001 getline 1001"), std::string::npos) << plain.out;
}

INSTANTIATE_TEST_SUITE_P(AsWrittenAndFortified, IoStdioRuns, ::testing::Bool(),
                         [](const auto& param_info) { return param_info.param ? "Fortified" : "AsWritten"; });

}  // namespace
