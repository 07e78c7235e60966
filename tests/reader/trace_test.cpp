// Opening a trace: the file header, the metadata blocks, files on disk.
#include <unistd.h>

#include <cstring>
#include <limits>
#include <random>

#include "sample_trace.h"
#include "temp_dir.h"
#include "test_support.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(TraceOpen, ReadsEveryMetadataBlock) {
  const TraceBuilder t = sample_trace();
  reader::Trace trace = open_ok(t.bytes());
  EXPECT_FALSE(trace.damage().has_value());
  EXPECT_TRUE(trace.warnings().empty()) << trace.warnings()[0];
  EXPECT_EQ(trace.file_size(), t.size());
  EXPECT_EQ(trace.version_major(), 1);
  EXPECT_EQ(trace.version_minor(), spoor::format::kVersionMinor);
  EXPECT_TRUE(trace.has_clock());

  ASSERT_EQ(trace.processes().size(), 1u);
  const reader::Process& p = trace.processes()[0];
  EXPECT_EQ(p.pid, kSamplePid);
  EXPECT_EQ(p.name, "demo");
  EXPECT_EQ(p.arguments, (std::vector<std::string>{"demo", "--fast"}));
  EXPECT_EQ(trace.process(kSamplePid), &p);
  EXPECT_EQ(trace.process(1), nullptr);

  ASSERT_EQ(trace.streams().size(), 2u);
  const reader::Stream* s2 = trace.stream(2);
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(s2->cpu, 1u);
  EXPECT_EQ(s2->pid, kSamplePid);
  ASSERT_EQ(s2->packets.size(), 2u);
  EXPECT_EQ(s2->packets[1].record_count, 2u);
  EXPECT_EQ(s2->packets[0].offset, t.block_offsets()[9]);
  ASSERT_TRUE(trace.stream(1)->end.has_value());
  EXPECT_EQ(trace.stream(1)->end->lost_total, 4u);

  const reader::Provider* provider = trace.provider(kSamplePid, 0);
  ASSERT_NE(provider, nullptr);
  EXPECT_EQ(provider->name, "Demo.Provider");
  EXPECT_EQ(provider->guid.to_string(), "10111213-1415-1617-1819-1a1b1c1d1e1f");

  const reader::EventDescriptor* hello = trace.event(kSamplePid, kKeyHello);
  ASSERT_NE(hello, nullptr);
  EXPECT_EQ(hello->name, "Hello");
  EXPECT_EQ(hello->provider, provider);
  EXPECT_EQ(hello->keywords, 0x5u);
  EXPECT_EQ(hello->level, 4);
  ASSERT_EQ(hello->fields.size(), 2u);
  EXPECT_EQ(hello->fields[1].name, "msg");
  EXPECT_EQ(hello->fields[1].type, fmt::kFieldString);
  EXPECT_EQ(trace.event(kSamplePid, kKeyReadStop)->opcode, fmt::kOpStop);
  EXPECT_EQ(trace.event(kSamplePid, 99), nullptr);
}

// A traced exec announces the process again: processes() keeps the last
// announcement, process_blocks() every one, in order.
TEST(TraceOpen, EveryAnnouncementOfAProcessIsKept) {
  TraceBuilder t;
  t.clock_ns();
  t.process(kSamplePid, "bash", {"bash", "script"});
  t.process(7, "other", {"other"});
  t.process(kSamplePid, "python3", {"python3", "-c", "1"});
  reader::Trace trace = open_ok(t.bytes());
  ASSERT_EQ(trace.processes().size(), 2u);
  EXPECT_EQ(trace.process(kSamplePid)->name, "python3");
  ASSERT_EQ(trace.process_blocks().size(), 3u);
  EXPECT_EQ(trace.process_blocks()[0].arguments, (std::vector<std::string>{"bash", "script"}));
  EXPECT_EQ(trace.process_blocks()[1].pid, 7u);
  EXPECT_EQ(trace.process_blocks()[2].arguments, (std::vector<std::string>{"python3", "-c", "1"}));
}

TEST(TraceOpen, PacketsAreReadInSequenceOrder) {
  TraceBuilder t;
  add_sample_metadata(t);
  t.packet(PacketBuilder(1, 0, 1).add(hello(20, 2, "second").tid(1)));
  t.packet(PacketBuilder(1, 0, 0).add(hello(10, 1, "first").tid(1)));
  reader::Trace trace = open_ok(t.bytes());
  EXPECT_EQ(trace.stream(1)->packets[0].sequence, 0u);
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(std::get<std::string_view>(*r.events[0].field("msg")), "first");
}

TEST(TraceOpen, WrongMagicIsNotATrace) {
  Bytes bytes = sample_trace().bytes();
  bytes[0] = 'X';
  reader::Result<reader::Trace> trace = reader::Trace::from_bytes(bytes);
  ASSERT_FALSE(trace.ok());
  EXPECT_TRUE(contains(trace.error(), "not a Spoor trace")) << trace.error();
  const std::string text = "hello, this is a text file and certainly not a trace\n";
  trace = reader::Trace::from_bytes(Bytes(text.begin(), text.end()));
  EXPECT_TRUE(contains(trace.error(), "not a Spoor trace")) << trace.error();
}

TEST(TraceOpen, TooShortForTheHeader) {
  const Bytes all = sample_trace().bytes();
  reader::Result<reader::Trace> trace = reader::Trace::from_bytes(Bytes(all.begin(), all.begin() + 20));
  ASSERT_FALSE(trace.ok());
  EXPECT_TRUE(contains(trace.error(), "20 bytes, too short for the 32-byte trace header"))
      << trace.error();
  trace = reader::Trace::from_bytes(Bytes{});
  EXPECT_TRUE(contains(trace.error(), "empty")) << trace.error();
}

TEST(TraceOpen, AnotherMajorVersionIsRejectedNamingBoth) {
  TraceBuilder t = sample_trace();
  t.version(2, 3);
  reader::Result<reader::Trace> trace = reader::Trace::from_bytes(t.bytes());
  ASSERT_FALSE(trace.ok());
  EXPECT_TRUE(contains(trace.error(), "format version 2.3")) << trace.error();
  EXPECT_TRUE(contains(trace.error(), "reads version 1.x")) << trace.error();
}

TEST(TraceOpen, ANewerMinorVersionIsRead) {
  TraceBuilder t = sample_trace();
  t.version(1, 7);
  reader::Trace trace = open_ok(t.bytes());
  EXPECT_EQ(trace.version_minor(), 7);
  EXPECT_EQ(read_all(trace).events.size(), static_cast<size_t>(kSampleEvents));
}

TEST(TraceOpen, UnknownBlockTypesAreSkipped) {
  TraceBuilder t;
  add_sample_metadata(t);
  const uint8_t future[] = {1, 2, 3, 4, 5};
  t.block(200, future);
  t.packet(PacketBuilder(1, 0, 0).add(hello(10, 1, "after").tid(1)));
  t.block(0, {});
  reader::Trace trace = open_ok(t.bytes());
  EXPECT_FALSE(trace.damage().has_value());
  ASSERT_EQ(trace.warnings().size(), 1u);
  EXPECT_TRUE(contains(trace.warnings()[0], "2 block(s) of types this reader does not know"));
  EXPECT_EQ(read_all(trace).events.size(), 1u);
}

TEST(TraceOpen, WarnsAboutAStreamWithoutItsProcess) {
  TraceBuilder t;
  t.clock_ns();
  t.stream(1, 55, 0);
  reader::Trace trace = open_ok(t.bytes());
  ASSERT_EQ(trace.warnings().size(), 1u);
  EXPECT_TRUE(contains(trace.warnings()[0], "pid 55, which has no PROCESS block"));
}

class TraceFile : public ::testing::Test {
 protected:
  std::string path(const std::string& name) {
    return spoor::test::test_temp_path("trace_test_" + name);
  }
};

TEST_F(TraceFile, OpensFromAPath) {
  const std::string file = path("sample.spoor");
  ASSERT_TRUE(sample_trace().write(file));
  reader::Result<reader::Trace> trace = reader::Trace::open(file);
  ASSERT_TRUE(trace.ok()) << trace.error();
  EXPECT_EQ(read_all(*trace).events.size(), static_cast<size_t>(kSampleEvents));
  ::unlink(file.c_str());
}

TEST_F(TraceFile, MissingFileAndDirectoryAreErrors) {
  reader::Result<reader::Trace> trace = reader::Trace::open(path("does-not-exist.spoor"));
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error(), "No such file or directory");
  trace = reader::Trace::open(::testing::TempDir());
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error(), "Is a directory");
}

TEST_F(TraceFile, EmptyFileIsAnError) {
  const std::string file = path("empty.spoor");
  ASSERT_TRUE(TraceBuilder().write(file));
  ::truncate(file.c_str(), 0);
  reader::Result<reader::Trace> trace = reader::Trace::open(file);
  ASSERT_FALSE(trace.ok());
  EXPECT_TRUE(contains(trace.error(), "empty"));
  ::unlink(file.c_str());
}

// ns = monotonic_ns_ref + (ticks - tick_ref) * 10^12 / freq_millihz, the
// division truncated toward zero, saturated to int64: the fast division
// (one divq on x86-64) must give what the formula gives, before and after
// tick_ref, for a TSC's, a nanosecond clock's and a 24 MHz counter's
// frequencies, and saturate where the result does not fit.
TEST(Clock, TicksToNanosecondsFollowTheFormulaExactly) {
  std::mt19937_64 rng(5);
  for (uint64_t freq : {2'095'991'000'000ull, 1'000'000'000'000ull, 24'000'000'000ull, 1'000ull, 1ull}) {
    reader::Clock clock;
    clock.freq_millihz = freq;
    clock.tick_ref = 150'068'909'139'427ull;
    clock.monotonic_ns_ref = 57'600'000'000'000;
    for (int i = 0; i < 20000; ++i) {
      const int shift = static_cast<int>(rng() % 64);
      const uint64_t delta = rng() >> shift;
      const uint64_t ticks = i % 2 == 0 ? clock.tick_ref + delta : clock.tick_ref - delta;
      const __int128 diff = static_cast<int64_t>(ticks - clock.tick_ref);
      __int128 want = clock.monotonic_ns_ref + diff * 1'000'000'000'000 / static_cast<__int128>(freq);
      if (want > std::numeric_limits<int64_t>::max()) want = std::numeric_limits<int64_t>::max();
      if (want < std::numeric_limits<int64_t>::min()) want = std::numeric_limits<int64_t>::min();
      ASSERT_EQ(clock.to_ns(ticks), static_cast<int64_t>(want)) << "freq " << freq << " ticks " << ticks;
    }
  }
  reader::Clock slow;
  slow.freq_millihz = 1;
  EXPECT_EQ(slow.to_ns(1ull << 40), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(slow.to_ns(0 - (1ull << 40)), std::numeric_limits<int64_t>::min());
}

TEST(GuidText, RoundTrips) {
  const auto g = reader::Guid::parse("CE5FA4EA-ab00-5402-8b76-9f76ac858fb5");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->to_string(), "ce5fa4ea-ab00-5402-8b76-9f76ac858fb5");
  EXPECT_EQ(g->bytes[0], 0xCE);
  EXPECT_FALSE(reader::Guid::parse("ce5fa4ea-ab00-5402-8b76-9f76ac858fb").has_value());
  EXPECT_FALSE(reader::Guid::parse("ce5fa4eaXab00-5402-8b76-9f76ac858fb5").has_value());
  EXPECT_TRUE(reader::Guid().is_zero());
}

TEST(Names, OpcodesAndLevelsReadAsWords) {
  EXPECT_EQ(reader::opcode_name(fmt::kOpStart), "start");
  EXPECT_EQ(reader::opcode_name(fmt::kOpReceive), "receive");
  EXPECT_EQ(reader::opcode_name(17), "opcode 17");
  EXPECT_EQ(reader::level_name(2), "error");
  EXPECT_EQ(reader::level_name(9), "level 9");
  EXPECT_EQ(reader::field_type_name(fmt::kFieldActivityId), "activity_id");
  EXPECT_EQ(reader::block_type_name(fmt::kBlockStreamEnd), "STREAM_END");
}

}  // namespace
}  // namespace spoor::testing
