// The spoor tool, run as a program: its formats parse, its help and usage
// errors, and how it reports unreadable and damaged traces.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "sample_trace.h"
#include "spoor/format.h"
#include "temp_dir.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

struct Outcome {
  int status = -1;  // the exit status; -1 when killed by a signal
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class Cli : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const {
    return spoor::test::test_temp_path("cli_test_" + name);
  }

  void TearDown() override {
    for (const std::string& f : files_) ::unlink(f.c_str());
  }

  std::string write(const std::string& name, const Bytes& bytes) {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                             static_cast<std::streamsize>(bytes.size()));
    files_.push_back(p);
    return p;
  }

  // Runs `spoor ARGS` (ARGS already shell-quoted where needed).
  Outcome spoor(const std::string& args) {
    const std::string out = path("stdout"), err = path("stderr");
    files_.push_back(out);
    files_.push_back(err);
    const std::string cmd = std::string(SPOOR_TOOL_PATH) + " " + args + " >" + out + " 2>" + err;
    const int rc = std::system(cmd.c_str());
    Outcome r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  std::vector<std::string> files_;
};

// RFC 4180 rows: quoted cells may hold commas, doubled quotes and newlines.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  rows.back().clear();
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      rows.back().push_back(cell);
      cell.clear();
      rows.emplace_back();
    } else {
      cell += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST_F(Cli, HelpListsTheCommands) {
  Outcome r = spoor("help");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.out, "dump "));
  EXPECT_TRUE(contains(r.out, "info "));
  EXPECT_TRUE(contains(r.out, "help "));
  EXPECT_EQ(spoor("--help").out, r.out);
}

TEST_F(Cli, HelpExplainsOneCommand) {
  Outcome help = spoor("help dump");
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(contains(help.out, "usage: spoor dump FILE [--format text|jsonl|csv]"));
  Outcome flag = spoor("dump --help");
  EXPECT_EQ(flag.status, 0);
  EXPECT_EQ(flag.out, help.out);
  EXPECT_TRUE(contains(spoor("info -h").out, "usage: spoor info FILE"));
}

TEST_F(Cli, UsageErrorsExitWith2) {
  Outcome none = spoor("");
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(contains(none.err, "usage: spoor COMMAND"));

  Outcome unknown = spoor("frobnicate x");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err, "spoor: unknown command 'frobnicate'; run 'spoor help' for the list\n");
  EXPECT_EQ(spoor("help frobnicate").status, 2);

  Outcome option = spoor("dump --bogus x.spoor");
  EXPECT_EQ(option.status, 2);
  EXPECT_EQ(option.err, "spoor dump: unknown option '--bogus'; run 'spoor help dump'\n");

  Outcome format = spoor("dump x.spoor --format=xml");
  EXPECT_EQ(format.status, 2);
  EXPECT_TRUE(contains(format.err, "--format must be text, jsonl or csv, not 'xml'"));

  EXPECT_EQ(spoor("dump").status, 2);
  EXPECT_EQ(spoor("dump --format").status, 2);
  EXPECT_EQ(spoor("info a b").status, 2);
}

TEST_F(Cli, UnreadableTracesExitWith1) {
  const std::string missing = path("missing.spoor");
  Outcome r = spoor("dump " + missing);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "spoor: cannot read trace '" + missing + "': No such file or directory\n");

  const std::string text = "just some text, long enough to hold a header\n";
  const std::string not_trace = write("text.spoor", Bytes(text.begin(), text.end()));
  r = spoor("info " + not_trace);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "spoor: cannot read trace '" + not_trace + "': not a Spoor trace"));

  TraceBuilder v2 = sample_trace();
  v2.version(2, 0);
  r = spoor("dump " + write("v2.spoor", v2.bytes()));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "format version 2.0; this spoor reads version 1.x")) << r.err;
}

TEST_F(Cli, DumpTextIsOneAlignedLinePerEvent) {
  const std::string file = write("sample.spoor", sample_trace().bytes());
  Outcome r = spoor("dump " + file);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 1u + kSampleEvents);
  EXPECT_TRUE(contains(out[0], "TIME_NS"));
  EXPECT_TRUE(contains(out[1], "Demo.Provider"));
  EXPECT_TRUE(contains(out[1], "n=1 msg=\"one\""));
  EXPECT_TRUE(contains(out[1], "0x0000000000000005"));
  EXPECT_TRUE(contains(out[3], "activity=40414243-4445-4647-4849-4a4b4c4d4e4f"));
  // Aligned: the provider column starts at the same place on every line.
  const size_t column = out[1].find("Demo.Provider");
  for (size_t i = 1; i < out.size(); ++i) EXPECT_EQ(out[i].find("Demo.Provider"), column);
  // "-" reads standard input, a pipe included.
  EXPECT_EQ(spoor("dump - < " + file).out, r.out);
  EXPECT_EQ(spoor("dump - --format csv < " + file).status, 0);
}

TEST_F(Cli, DumpJsonlParsesWithTypedFields) {
  TraceBuilder t;
  add_sample_metadata(t);
  t.event({.pid = kSamplePid, .key = 9, .opcode = fmt::kOpSend, .name = "Typed",
           .fields = {{fmt::kFieldU64, "big"}, {fmt::kFieldI32, "neg"}, {fmt::kFieldF64, "ratio"},
                      {fmt::kFieldBool, "flag"}, {fmt::kFieldBlob, "blob"},
                      {fmt::kFieldPointer, "ptr"}, {fmt::kFieldActivityId, "act"},
                      {fmt::kFieldString, "bad_utf8"}}});
  const uint8_t blob[] = {0xDE, 0xAD, 0x01};
  t.packet(PacketBuilder(1, 0, 0)
               .add(hello(10, 1, "one").tid(5))
               .add(RecordBuilder(9, 20)
                        .related(guid_from_seed(0x20))
                        .u64(UINT64_MAX)
                        .i32(-7)
                        .f64(0.5)
                        .boolean(true)
                        .blob(blob)
                        .pointer(0xffff8000deadbeefull)
                        .guid(guid_from_seed(0x30))
                        .string("caf\xC3")));
  Outcome r = spoor("dump --format jsonl " + write("typed.spoor", t.bytes()));
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 2u);
  std::vector<nlohmann::json> events;
  for (const std::string& line : out) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << line;
    events.push_back(j);
  }
  EXPECT_EQ(events[0]["time_ns"], 10);
  EXPECT_EQ(events[0]["tid"], 5);
  EXPECT_EQ(events[0]["provider"], "Demo.Provider");
  EXPECT_EQ(events[0]["event"], "Hello");
  EXPECT_EQ(events[0]["opcode"], "info");
  EXPECT_EQ(events[0]["level"], "info");
  EXPECT_EQ(events[0]["keywords"], "0x5");
  EXPECT_EQ(events[0]["activity_id"], "");
  EXPECT_EQ(events[0]["fields"]["n"], 1);
  EXPECT_EQ(events[0]["fields"]["msg"], "one");

  const nlohmann::json& f = events[1]["fields"];
  EXPECT_EQ(events[1]["opcode"], "send");
  EXPECT_EQ(events[1]["tid"], 5);  // carried over from the first record
  EXPECT_EQ(events[1]["related_activity_id"], "20212223-2425-2627-2829-2a2b2c2d2e2f");
  EXPECT_TRUE(f["big"].is_number_unsigned());
  EXPECT_EQ(f["big"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(f["neg"], -7);
  EXPECT_EQ(f["ratio"], 0.5);
  EXPECT_EQ(f["flag"], true);
  EXPECT_EQ(f["blob"], "dead01");
  EXPECT_EQ(f["ptr"], "0xffff8000deadbeef");
  EXPECT_EQ(f["act"], "30313233-3435-3637-3839-3a3b3c3d3e3f");
  EXPECT_EQ(f["bad_utf8"], "caf\xEF\xBF\xBD");  // the bad byte became U+FFFD
}

TEST_F(Cli, DumpCsvHasAHeaderAndQuotedFields) {
  TraceBuilder t;
  add_sample_metadata(t);
  t.packet(PacketBuilder(1, 0, 0)
               .add(hello(10, 1, "plain").tid(5))
               .add(hello(20, 2, "a, \"quoted\"; string")));
  Outcome r = spoor("dump " + write("csv.spoor", t.bytes()) + " --format csv");
  EXPECT_EQ(r.status, 0) << r.err;
  const auto rows = parse_csv(r.out);
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string> header = {"time_ns", "cpu", "pid", "tid", "provider", "event",
                                           "opcode", "level", "keywords", "activity_id",
                                           "related_activity_id", "fields"};
  EXPECT_EQ(rows[0], header);
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size());
  EXPECT_EQ(rows[1][0], "10");
  EXPECT_EQ(rows[1][5], "Hello");
  EXPECT_EQ(rows[1][11], "n=1;msg=\"plain\"");
  EXPECT_EQ(rows[2][11], "n=2;msg=\"a, \\\"quoted\\\"; string\"");
}

TEST_F(Cli, InfoSummarizesTheTrace) {
  const std::string file = write("sample.spoor", sample_trace().bytes());
  Outcome r = spoor("info " + file);
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string format = "format     1." + std::to_string(spoor::format::kVersionMinor);
  for (const char* part :
       {format.c_str(), "clock      CLOCK_MONOTONIC", "time span  1000 .. 4000 ns (3.000 us), 8 events",
        "pid 100 (ppid 1, 64-bit) demo: demo --fast", "Demo.Provider {10111213-",
        "4 events lost on cpu 0 between 1500 and 3100 ns", "stream 1 (pid 100, cpu 0): 4 lost",
        "Read ", "damage\n  (none)"})
    EXPECT_TRUE(contains(r.out, part)) << "missing: " << part << "\n" << r.out;
}

TEST_F(Cli, InfoListsTheJitSymbolMapsKeptInTheTrace) {
  TraceBuilder t = sample_trace();
  const std::string path = "/tmp/perf-100.map", text = "1000 10 JS:a\n1010 20 JS:b\n";
  fmt::SymbolMapBlock b{};
  b.pid = 100;
  b.kind = fmt::kSymbolMapPerf;
  b.path_size = static_cast<uint16_t>(path.size());
  Bytes payload(sizeof b);
  std::memcpy(payload.data(), &b, sizeof b);
  payload.insert(payload.end(), path.begin(), path.end());
  payload.insert(payload.end(), text.begin(), text.end());
  t.block(fmt::kBlockSymbolMap, payload);
  Outcome with = spoor("info " + write("maps.spoor", t.bytes()));
  EXPECT_EQ(with.status, 0) << with.err;
  EXPECT_TRUE(contains(with.out, "JIT symbol maps kept in the trace\n  pid 100: /tmp/perf-100.map, 2 line(s), 26 bytes\n"))
      << with.out;
  Outcome without = spoor("info " + write("no-maps.spoor", sample_trace().bytes()));
  EXPECT_FALSE(contains(without.out, "JIT symbol maps")) << without.out;
}

TEST_F(Cli, InfoCountsActivitiesLeftOpenApartFromUnmatchedOnes) {
  TraceBuilder t;
  add_sample_metadata(t);
  // Read a stops; read b starts and never stops (its thread still ran when
  // the trace ended); read c stops without a start.
  const Guid16 a = guid_from_seed(1), b = guid_from_seed(2), c = guid_from_seed(3);
  t.packet(PacketBuilder(1, 0, 0)
               .add(RecordBuilder(kKeyReadStart, 1000).tid(11).activity(a))
               .add(RecordBuilder(kKeyReadStart, 1100).activity(b))
               .add(RecordBuilder(kKeyReadStop, 1500).activity(a).u64(1))
               .add(RecordBuilder(kKeyReadStop, 1600).activity(c).u64(1)));
  t.stream_end(1, 0, 0, 1);
  Outcome r = spoor("info " + write("open.spoor", t.bytes()));
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> out = lines(r.out);
  auto line_with = [&](const std::string& part) {
    for (const std::string& l : out)
      if (contains(l, part)) return l;
    return std::string();
  };
  EXPECT_TRUE(contains(line_with("PROVIDER"), "COUNT      OPEN")) << r.out;
  const std::string row = line_with("Demo.Provider   ");
  EXPECT_TRUE(contains(row, " Read ")) << r.out;
  EXPECT_TRUE(contains(row, " 1         1       500 ns       500 ns       500 ns")) << r.out;
  EXPECT_TRUE(contains(r.out, "unmatched: 0 started again before stopping, 1 stops without a start")) << r.out;
  // Without open ones, no OPEN column.
  Outcome closed = spoor("info " + write("sample.spoor", sample_trace().bytes()));
  EXPECT_FALSE(contains(closed.out, "OPEN")) << closed.out;
}

TEST_F(Cli, DamagedTracePrintsWhatWasRecoveredThenTheDamage) {
  const TraceBuilder t = sample_trace();
  const size_t packet = t.block_offsets()[10];  // stream 1's second packet
  const size_t cut = packet + 40;
  const std::string file = write("cut.spoor", Bytes(t.bytes().begin(), t.bytes().begin() + cut));
  Outcome r = spoor("dump " + file);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines(r.out).size(), 1u + 4u);  // header + the first two packets
  EXPECT_EQ(r.err, "spoor: trace '" + file + "' is damaged at byte " + std::to_string(packet) +
                       ": truncated at byte " + std::to_string(cut) + " inside a PACKET block of " +
                       std::to_string(t.block_offsets()[11] - packet) + " bytes starting at byte " +
                       std::to_string(packet) + " (stream 1, cpu 0); 4 events recovered\n");

  Outcome info = spoor("info " + file);
  EXPECT_EQ(info.status, 1);
  EXPECT_TRUE(contains(info.out, "at byte " + std::to_string(packet) + ": truncated"));
  EXPECT_TRUE(contains(info.err, "is damaged at byte"));
}

TEST_F(Cli, RecordDamageIsReportedToo) {
  TraceBuilder t;
  add_sample_metadata(t);
  const RecordBuilder good = hello(10, 1, "ok").tid(5);
  const size_t bad = t.size() + 16 + 48 + good.encode().size();
  t.packet(PacketBuilder(1, 0, 0).add(good).add(RecordBuilder(77, 20)));
  t.packet(PacketBuilder(2, 1, 0).add(hello(30, 2, "other").tid(6)));
  const std::string file = write("bad_record.spoor", t.bytes());
  Outcome r = spoor("dump --format jsonl " + file);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines(r.out).size(), 2u);
  EXPECT_TRUE(contains(r.err, "is damaged at byte " + std::to_string(bad) +
                                  ": stream 1, packet 0 (cpu 0), record 1 at byte " +
                                  std::to_string(bad) + ": event key 77 has no EVENT block"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "; 2 events recovered\n")) << r.err;
}

TEST_F(Cli, GarbageNeverCrashesIt) {
  const TraceBuilder t = sample_trace();
  std::mt19937 rng(99);
  for (int round = 0; round < 20; ++round) {
    Bytes bytes = t.bytes();
    for (int i = 0; i < 3; ++i) bytes[32 + rng() % (bytes.size() - 32)] = static_cast<uint8_t>(rng());
    if (round % 3 == 0) bytes.resize(rng() % bytes.size());
    const std::string file = write("garbage.spoor", bytes);
    for (const char* command : {"dump", "dump --format jsonl", "dump --format csv", "info"}) {
      Outcome r = spoor(std::string(command) + " " + file);
      EXPECT_TRUE(r.status == 0 || r.status == 1) << command << " exited " << r.status;
    }
  }
}

}  // namespace
}  // namespace spoor::testing
