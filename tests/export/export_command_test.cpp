// spoor export end to end: spoor record runs a program whose content is
// known (programs/export_known.c), spoor export writes every format, and
// the consumers read it back: go tool pprof, protoc --decode_raw, a JSON
// parser, and the folded lines' totals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chrome_nesting.h"
#include "decoded_proto.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

using nlohmann::json;
using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;

// What the reader finds in the recorded trace, to compare exports with.
struct Recorded {
  std::string trace;
  uint64_t samples = 0;
  uint32_t pid = 0;
  uint32_t writer_tid = 0;  // the thread that wrote 3 times
};

class ExportCommand : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    recorded_ = new Recorded;
    recorded_->trace = spoor::test::temp_path("export-known.spoor");
    const std::string out = spoor::test::temp_path("export-known.out");
    const Process r = run(kSpoor + " record -o " + recorded_->trace + " -- " + SPOOR_EXPORT_KNOWN + " " + out);
    std::remove(out.c_str());
    ASSERT_EQ(r.status, 0) << r.err;
    auto trace = spoor::reader::Trace::open(recorded_->trace);
    ASSERT_TRUE(trace) << trace.error();
    spoor::reader::EventReader events(trace.value());
    spoor::reader::Event e;
    while (events.next(e)) {
      if (e.descriptor->name == "Sample") ++recorded_->samples;
      if (e.descriptor->name == "Write") {
        recorded_->pid = e.pid;
        recorded_->writer_tid = e.tid;
      }
    }
  }
  static void TearDownTestSuite() {
    std::remove(recorded_->trace.c_str());
    delete recorded_;
  }

  // Runs spoor export to a file; the output's bytes, "" when it failed.
  static std::string exported(const std::string& format, const std::string& options = "") {
    const std::string out = spoor::test::temp_path("export." + format);
    const Process p = run(kSpoor + " export " + recorded_->trace + " --format " + format + " " + options + " -o " + out);
    EXPECT_EQ(p.status, 0) << p.err;
    std::string bytes = spoor::test::read_file(out);
    std::remove(out.c_str());
    return bytes;
  }

  static Recorded* recorded_;
};

Recorded* ExportCommand::recorded_ = nullptr;

// "a;b;c 12" lines -> stack -> weight.
std::map<std::string, uint64_t> folded_lines(const std::string& text) {
  std::map<std::string, uint64_t> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    lines[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return lines;
}

// The weight of the lines whose leaf is `function`, and of all lines.
std::pair<uint64_t, uint64_t> leaf_and_total(const std::map<std::string, uint64_t>& lines, const std::string& function) {
  uint64_t leaf = 0, total = 0;
  for (const auto& [stack, w] : lines) {
    total += w;
    const size_t semi = stack.rfind(';');
    if (stack.substr(semi == std::string::npos ? 0 : semi + 1) == function) leaf += w;
  }
  return {leaf, total};
}

TEST_F(ExportCommand, FoldedSamplesSumToTheTracesSamplesAndBurnCpuLeads) {
  ASSERT_GT(recorded_->samples, 10u) << "the program spins for 300 ms of CPU";
  const auto lines = folded_lines(exported("folded"));
  const auto [burn, total] = leaf_and_total(lines, "burn_cpu");
  EXPECT_EQ(total, recorded_->samples);
  EXPECT_GT(burn * 2, total) << "most samples interrupt burn_cpu's loop";
  for (const auto& [stack, w] : lines) {
    if (stack.ends_with(";burn_cpu")) {
      EXPECT_TRUE(stack.find(";main;burn_cpu") != std::string::npos) << stack;
    }
  }
}

TEST_F(ExportCommand, FoldedAllocationWeightsHaveTheKnownSites) {
  const auto leaked = folded_lines(exported("folded", "--weight leaked-bytes"));
  EXPECT_EQ(leaf_and_total(leaked, "leak_site").first, 10'000u);
  EXPECT_EQ(leaf_and_total(leaked, "churn_site").first, 0u) << "churn_site frees all it allocates";
  const auto calls = folded_lines(exported("folded", "--weight alloc-calls"));
  EXPECT_EQ(leaf_and_total(calls, "leak_site").first, 10u);
  EXPECT_EQ(leaf_and_total(calls, "churn_site").first, 5u);
  const auto bytes = folded_lines(exported("folded", "--weight alloc-bytes"));
  EXPECT_EQ(leaf_and_total(bytes, "leak_site").first, 10'000u);
  EXPECT_EQ(leaf_and_total(bytes, "churn_site").first, 1'000u);
}

TEST_F(ExportCommand, GoToolPprofSeesTheKnownTopFunctionAndTotals) {
  if (!spoor::test::have_program("go")) GTEST_SKIP() << "go is not installed (scripts/install-test-deps.sh installs golang-go)";
  const std::string path = spoor::test::temp_path("export.pb.gz");
  spoor::test::write_file(path, exported("pprof"));
  const std::string go = "GOTOOLCHAIN=local PPROF_TMPDIR=/tmp go tool pprof -top ";
  const Process samples = run(go + "-sample_index=samples " + path);
  ASSERT_EQ(samples.status, 0) << samples.err;
  // pprof names a profile after its first mapping: the program, not a library.
  EXPECT_EQ(samples.out.substr(0, samples.out.find('\n')), "File: spoor_test_export_known") << samples.out;
  EXPECT_NE(samples.out.find("of " + std::to_string(recorded_->samples) + " total"), std::string::npos) << samples.out;
  const size_t header = samples.out.find("flat  flat%");
  ASSERT_NE(header, std::string::npos) << samples.out;
  const size_t row = samples.out.find('\n', header) + 1;
  EXPECT_NE(samples.out.substr(row, samples.out.find('\n', row) - row).find("burn_cpu"), std::string::npos)
      << samples.out;
  const Process inuse = run(go + "-sample_index=inuse_space " + path);
  EXPECT_NE(inuse.out.find("10000B"), std::string::npos) << inuse.out;
  EXPECT_NE(inuse.out.find("leak_site"), std::string::npos) << inuse.out;
  EXPECT_EQ(inuse.out.find("churn_site"), std::string::npos) << inuse.out;
  const Process objects = run(go + "-sample_index=alloc_objects " + path);
  EXPECT_NE(objects.out.find("leak_site"), std::string::npos) << objects.out;
  std::remove(path.c_str());
}

TEST_F(ExportCommand, ChromeJsonNestsAndShowsTheWriterThreadsWrites) {
  const json doc = json::parse(exported("chrome"));
  const json& events = doc.at("traceEvents");
  const auto begun = spoor::test::check_nesting(events);
  const auto writer = begun.find({static_cast<int>(recorded_->pid), static_cast<int>(recorded_->writer_tid)});
  ASSERT_NE(writer, begun.end());
  EXPECT_EQ(std::count(writer->second.begin(), writer->second.end(), "Write"), 3);
  bool named = false, counter = false;
  for (const json& e : events) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("tid") == recorded_->writer_tid)
      named = e.at("args").at("name") == "writer";
    if (e.at("ph") == "C" && e.at("name") == "heap size") counter = true;
    if (e.at("ph") == "B" && e.at("name") == "Write") {
      EXPECT_EQ(e.at("args").at("result"), "10");
    }
  }
  EXPECT_TRUE(named);
  EXPECT_TRUE(counter);
}

TEST_F(ExportCommand, PerfettoTraceHasTheTracksSlicesAndSamples) {
  if (!spoor::test::have_program("protoc"))
    GTEST_SKIP() << "protoc is not installed (scripts/install-test-deps.sh installs protobuf-compiler)";
  std::string error;
  const spoor::test::ProtoNode root = spoor::test::decode_raw(exported("perfetto"), error);
  ASSERT_TRUE(error.empty()) << error;
  std::string writer_track, heap_track;
  uint64_t samples = 0, writes = 0, heap_values = 0;
  bool burn_cpu_interned = false;
  for (const spoor::test::ProtoNode* p : root.all(1)) {
    if (const auto* interned = p->first(12))
      for (const auto* name : interned->all(5)) burn_cpu_interned |= name->scalar(2) == "\"burn_cpu\"";
    if (const auto* track = p->first(60)) {
      if (const auto* thread = track->first(4); thread && thread->scalar(2) == std::to_string(recorded_->writer_tid)) {
        EXPECT_EQ(thread->scalar(5), "\"writer\"");
        writer_track = track->scalar(1);
      }
      if (track->scalar(2) == "\"heap size\"") heap_track = track->scalar(1);
    }
    if (const auto* e = p->first(11)) {
      if (e->scalar(11) == writer_track && e->scalar(9) == "1" && e->scalar(23) == "\"Write\"") ++writes;
      if (e->scalar(11) == heap_track && e->scalar(9) == "4") ++heap_values;
    }
    if (const auto* s = p->first(66)) {
      ++samples;
      EXPECT_EQ(s->scalar(2), std::to_string(recorded_->pid));
      EXPECT_NE(s->scalar(4), "<none>") << "every sample has a callstack";
    }
  }
  EXPECT_FALSE(writer_track.empty());
  EXPECT_EQ(writes, 3u);
  EXPECT_GT(heap_values, 0u);
  EXPECT_EQ(samples, recorded_->samples);
  EXPECT_TRUE(burn_cpu_interned);
}

TEST_F(ExportCommand, BadInputsSayWhatIsWrongAndExitNonZero) {
  const std::string base = kSpoor + " export ";
  const Process missing = run(base + "/nonexistent/trace.spoor --format folded");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot read trace '/nonexistent/trace.spoor'"), std::string::npos) << missing.err;

  const std::string junk = spoor::test::temp_path("junk.spoor");
  spoor::test::write_file(junk, std::string(4096, 'x'));
  const Process corrupt = run(base + junk + " --format chrome");
  EXPECT_EQ(corrupt.status, 1);
  EXPECT_NE(corrupt.err.find("cannot read trace '" + junk + "'"), std::string::npos) << corrupt.err;
  std::remove(junk.c_str());

  const Process format = run(base + recorded_->trace + " --format svg");
  EXPECT_EQ(format.status, 2);
  EXPECT_NE(format.err.find("--format must be perfetto, chrome, pprof or folded, not 'svg'"), std::string::npos)
      << format.err;
  const Process no_format = run(base + recorded_->trace);
  EXPECT_EQ(no_format.status, 2);
  EXPECT_NE(no_format.err.find("missing --format"), std::string::npos) << no_format.err;
  const Process weight = run(base + recorded_->trace + " --format pprof --weight samples");
  EXPECT_EQ(weight.status, 2);
  EXPECT_NE(weight.err.find("--weight applies to --format folded only"), std::string::npos) << weight.err;

  const Process unwritable = run(base + recorded_->trace + " --format perfetto -o /nonexistent/dir/out.pftrace");
  EXPECT_EQ(unwritable.status, 1);
  EXPECT_NE(unwritable.err.find("cannot write '/nonexistent/dir/out.pftrace': No such file or directory"),
            std::string::npos)
      << unwritable.err;
}

TEST_F(ExportCommand, ACutTraceIsExportedAsFarAsItReadsAndExitsOne) {
  const std::string bytes = spoor::test::read_file(recorded_->trace);
  const std::string cut = spoor::test::temp_path("cut.spoor");
  spoor::test::write_file(cut, bytes.substr(0, bytes.size() - 100));
  const std::string out = spoor::test::temp_path("cut.json");
  const Process p = run(kSpoor + " export " + cut + " --format chrome -o " + out);
  EXPECT_EQ(p.status, 1);
  EXPECT_NE(p.err.find("is damaged at byte"), std::string::npos) << p.err;
  EXPECT_NO_THROW(json::parse(spoor::test::read_file(out))) << "what was recovered is a whole document";
  std::remove(cut.c_str());
  std::remove(out.c_str());
}

// pprof's period is CPU time per sampling period: the rate the trace
// records (spoor record --sample-hz 500: 2 ms), unless --sample-hz says
// otherwise.
TEST(ExportRate, PprofPeriodIsTheRecordedSamplingRate) {
  if (!spoor::test::have_program("protoc")) GTEST_SKIP() << "protoc is not installed";
  const std::string trace = spoor::test::temp_path("export-rate.spoor");
  const std::string out = spoor::test::temp_path("export-rate.out");
  const Process r =
      run(kSpoor + " record --sample-hz 500 -o " + trace + " -- " + SPOOR_EXPORT_KNOWN + " " + out);
  std::remove(out.c_str());
  ASSERT_EQ(r.status, 0) << r.err;
  auto period = [&](const std::string& options) {
    const std::string pprof = spoor::test::temp_path("export-rate.pb.gz");
    const Process p = run(kSpoor + " export " + trace + " --format pprof " + options + " -o " + pprof);
    EXPECT_EQ(p.status, 0) << p.err;
    const Process raw = run("gzip -dc " + pprof + " | protoc --decode_raw");
    std::remove(pprof.c_str());
    EXPECT_EQ(raw.status, 0) << raw.err;
    return spoor::test::parse_decode_raw(raw.out).scalar(12);  // Profile.period
  };
  EXPECT_EQ(period(""), "2000000");
  EXPECT_EQ(period("--sample-hz 250"), "4000000") << "the option still overrides";
  std::remove(trace.c_str());
}

}  // namespace
