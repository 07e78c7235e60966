// Record decoding: field types, thread ids, time widening, the clock.
#include <cmath>
#include <limits>

#include "test_support.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;
using reader::Value;

constexpr uint32_t kPid = 7;

TraceBuilder one_stream(uint32_t pointer_size = 8) {
  TraceBuilder t;
  t.clock_ns();
  t.process(kPid, "p", {}, pointer_size);
  t.stream(1, kPid, 3);
  t.provider(kPid, 0, "Types", guid_from_seed(1));
  return t;
}

TEST(RecordDecoding, EveryFieldTypeRoundTrips) {
  TraceBuilder t = one_stream();
  t.event({.pid = kPid, .key = 5, .name = "All",
           .fields = {{fmt::kFieldU8, "u8"}, {fmt::kFieldU16, "u16"}, {fmt::kFieldU32, "u32"},
                      {fmt::kFieldU64, "u64"}, {fmt::kFieldI8, "i8"}, {fmt::kFieldI16, "i16"},
                      {fmt::kFieldI32, "i32"}, {fmt::kFieldI64, "i64"}, {fmt::kFieldF32, "f32"},
                      {fmt::kFieldF64, "f64"}, {fmt::kFieldBool, "yes"}, {fmt::kFieldBool, "no"},
                      {fmt::kFieldString, "s"}, {fmt::kFieldBlob, "b"},
                      {fmt::kFieldPointer, "p"}, {fmt::kFieldActivityId, "a"},
                      {fmt::kFieldString, "empty"}}});
  const uint8_t blob[] = {0, 1, 0xFE, 0xFF};
  const std::string long_string(300, 'x');  // a two-byte ULEB128 length
  t.packet(PacketBuilder(1, 3, 0).add(RecordBuilder(5, 42)
                                          .tid(1234)
                                          .u8(0xAB)
                                          .u16(0xBEEF)
                                          .u32(0xDEADBEEF)
                                          .u64(0xFFFFFFFFFFFFFFFFull)
                                          .i8(-2)
                                          .i16(-300)
                                          .i32(std::numeric_limits<int32_t>::min())
                                          .i64(-5'000'000'000ll)
                                          .f32(1.5f)
                                          .f64(-0.25)
                                          .boolean(true)
                                          .boolean(false)
                                          .string(long_string)
                                          .blob(blob)
                                          .pointer(0x7fff12345678ull)
                                          .guid(guid_from_seed(0x90))
                                          .string("")));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_TRUE(r.damages.empty()) << r.damages[0].message;
  ASSERT_EQ(r.events.size(), 1u);
  const reader::Event& e = r.events[0];
  EXPECT_EQ(e.descriptor->name, "All");
  EXPECT_EQ(e.provider->name, "Types");
  EXPECT_EQ(e.tid, 1234u);
  EXPECT_EQ(e.cpu, 3u);
  EXPECT_EQ(e.pid, kPid);
  ASSERT_EQ(e.fields.size(), 17u);
  EXPECT_EQ(std::get<uint64_t>(*e.field("u8")), 0xABu);
  EXPECT_EQ(std::get<uint64_t>(*e.field("u16")), 0xBEEFu);
  EXPECT_EQ(std::get<uint64_t>(*e.field("u32")), 0xDEADBEEFu);
  EXPECT_EQ(std::get<uint64_t>(*e.field("u64")), 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(std::get<int64_t>(*e.field("i8")), -2);
  EXPECT_EQ(std::get<int64_t>(*e.field("i16")), -300);
  EXPECT_EQ(std::get<int64_t>(*e.field("i32")), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(std::get<int64_t>(*e.field("i64")), -5'000'000'000ll);
  EXPECT_EQ(std::get<double>(*e.field("f32")), 1.5);
  EXPECT_EQ(std::get<double>(*e.field("f64")), -0.25);
  EXPECT_TRUE(std::get<bool>(*e.field("yes")));
  EXPECT_FALSE(std::get<bool>(*e.field("no")));
  EXPECT_EQ(std::get<std::string_view>(*e.field("s")), long_string);
  const reader::Blob& b = std::get<reader::Blob>(*e.field("b"));
  EXPECT_EQ(std::vector<uint8_t>(b.bytes.begin(), b.bytes.end()),
            std::vector<uint8_t>(std::begin(blob), std::end(blob)));
  EXPECT_EQ(std::get<reader::Pointer>(*e.field("p")).address, 0x7fff12345678ull);
  EXPECT_EQ(std::get<reader::Guid>(*e.field("a")).bytes, guid_from_seed(0x90));
  EXPECT_EQ(std::get<std::string_view>(*e.field("empty")), "");
  EXPECT_EQ(e.field("missing"), nullptr);
}

TEST(RecordDecoding, PointerWidthFollowsTheProcess) {
  TraceBuilder t = one_stream(/*pointer_size=*/4);
  t.event({.pid = kPid, .key = 1, .name = "P",
           .fields = {{fmt::kFieldPointer, "p"}, {fmt::kFieldU8, "after"}}});
  t.packet(PacketBuilder(1, 3, 0).add(RecordBuilder(1, 1).tid(1).pointer(0x80001234, 4).u8(9)));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(std::get<reader::Pointer>(*r.events[0].field("p")).address, 0x80001234u);
  EXPECT_EQ(std::get<uint64_t>(*r.events[0].field("after")), 9u);
}

TEST(RecordDecoding, ActivityIdsComeFromTheHeader) {
  TraceBuilder t = one_stream();
  t.event({.pid = kPid, .key = 1, .name = "E", .fields = {{fmt::kFieldU16, "x"}}});
  t.packet(PacketBuilder(1, 3, 0)
               .add(RecordBuilder(1, 1).tid(1).activity(guid_from_seed(1)).related(guid_from_seed(2)).u16(5))
               .add(RecordBuilder(1, 2).related(guid_from_seed(3)).u16(6))
               .add(RecordBuilder(1, 3).u16(7)));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].activity_id->bytes, guid_from_seed(1));
  EXPECT_EQ(r.events[0].related_activity_id->bytes, guid_from_seed(2));
  EXPECT_FALSE(r.events[1].activity_id.has_value());
  EXPECT_EQ(r.events[1].related_activity_id->bytes, guid_from_seed(3));
  EXPECT_FALSE(r.events[2].activity_id.has_value());
  EXPECT_FALSE(r.events[2].related_activity_id.has_value());
  EXPECT_EQ(std::get<uint64_t>(*r.events[2].field("x")), 7u);
}

TEST(RecordDecoding, ThreadIdCarriesOverUntilItChanges) {
  TraceBuilder t = one_stream();
  t.event({.pid = kPid, .key = 1, .name = "E", .fields = {}});
  t.packet(PacketBuilder(1, 3, 0)
               .add(RecordBuilder(1, 10).tid(7))
               .add(RecordBuilder(1, 11))
               .add(RecordBuilder(1, 12).tid(9))
               .add(RecordBuilder(1, 13)));
  t.packet(PacketBuilder(1, 3, 1).add(RecordBuilder(1, 20).tid(11)).add(RecordBuilder(1, 21)));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_TRUE(r.damages.empty());
  std::vector<uint32_t> tids;
  for (const reader::Event& e : r.events) tids.push_back(e.tid);
  EXPECT_EQ(tids, (std::vector<uint32_t>{7, 7, 9, 9, 11, 11}));
}

TEST(RecordDecoding, TimeWidensAcrossA48BitWrap) {
  constexpr uint64_t kWrap = 1ull << 48;
  TraceBuilder t = one_stream();
  t.event({.pid = kPid, .key = 1, .name = "E", .fields = {}});
  // Across the wrap: the low 48 bits go from near 2^48 to small.
  t.packet(PacketBuilder(1, 3, 0)
               .add(RecordBuilder(1, 5 * kWrap - 10).tid(1))
               .add(RecordBuilder(1, 5 * kWrap - 1))
               .add(RecordBuilder(1, 5 * kWrap + 3)));
  // A record slightly before begin_ticks, with begin just after a wrap:
  // the signed 48-bit difference is negative.
  t.packet(PacketBuilder(1, 3, 1)
               .ticks(7 * kWrap + 2, 7 * kWrap + 2)
               .add(RecordBuilder(1, 7 * kWrap + 2).tid(1))
               .add(RecordBuilder(1, 7 * kWrap - 4)));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_TRUE(r.damages.empty());
  ASSERT_EQ(r.events.size(), 5u);
  EXPECT_EQ(r.events[0].ticks, 5 * kWrap - 10);
  EXPECT_EQ(r.events[1].ticks, 5 * kWrap - 1);
  EXPECT_EQ(r.events[2].ticks, 5 * kWrap + 3);
  // Within a stream records come in packet order, whatever their times.
  EXPECT_EQ(r.events[3].ticks, 7 * kWrap + 2);
  EXPECT_EQ(r.events[4].ticks, 7 * kWrap - 4);
  EXPECT_EQ(r.events[2].time_ns, static_cast<int64_t>(5 * kWrap + 3));
}

TEST(RecordDecoding, ClockConvertsTicksWithTheLastValidClockBlock) {
  TraceBuilder t;
  fmt::ClockBlock first{};
  first.source = fmt::kClockTsc;
  first.freq_millihz = 1'000'000'000'000ull;
  t.clock(first);
  fmt::ClockBlock last{};
  last.source = fmt::kClockTsc;
  last.freq_millihz = 3'000'000'000'000ull;  // 3 GHz
  last.tick_ref = 3'000'000;
  last.monotonic_ns_ref = 1'000'000'000;
  t.clock(last);
  fmt::ClockBlock invalid{};  // frequency 0: skipped, not damage
  t.clock(invalid);
  t.process(kPid, "p");
  t.stream(1, kPid, 0);
  t.provider(kPid, 0, "P");
  t.event({.pid = kPid, .key = 1, .name = "E", .fields = {}});
  t.packet(PacketBuilder(1, 0, 0).add(RecordBuilder(1, 3'000'000 - 3000).tid(1)).add(RecordBuilder(1, 6'000'000)));
  reader::Trace trace = open_ok(t.bytes());
  EXPECT_TRUE(trace.has_clock());
  EXPECT_EQ(trace.clock().freq_millihz, 3'000'000'000'000ull);
  EXPECT_EQ(trace.clock().offset, t.block_offsets()[1]);
  EXPECT_FALSE(trace.damage().has_value());
  ASSERT_FALSE(trace.warnings().empty());
  EXPECT_NE(trace.warnings()[0].find("frequency of 0"), std::string::npos);
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].time_ns, 1'000'000'000 - 1000);  // before tick_ref
  EXPECT_EQ(r.events[1].time_ns, 1'000'000'000 + 1'000'000);
}

TEST(RecordDecoding, WithoutAClockTicksAreNanoseconds) {
  TraceBuilder t;
  t.process(kPid, "p");
  t.stream(1, kPid, 0);
  t.provider(kPid, 0, "P");
  t.event({.pid = kPid, .key = 1, .name = "E", .fields = {}});
  t.packet(PacketBuilder(1, 0, 0).add(RecordBuilder(1, 12345).tid(1)));
  reader::Trace trace = open_ok(t.bytes());
  EXPECT_FALSE(trace.has_clock());
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].time_ns, 12345);
}

TEST(RecordDecoding, FormatExampleRecordIs24Bytes) {
  // docs/FORMAT.md: two 32-bit integers and a 5-character string take 24
  // bytes (this record is also its packet's first, so it carries a tid: 28).
  TraceBuilder t = one_stream();
  t.event({.pid = kPid, .key = 1, .name = "E",
           .fields = {{fmt::kFieldI32, "a"}, {fmt::kFieldU32, "b"}, {fmt::kFieldString, "s"}}});
  EXPECT_EQ(RecordBuilder(1, 0).i32(1).u32(2).string("hello").encode().size(), 24u);
  t.packet(PacketBuilder(1, 3, 0).add(RecordBuilder(1, 0).tid(5).i32(-1).u32(2).string("hello")));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(std::get<std::string_view>(*r.events[0].field("s")), "hello");
}

}  // namespace
}  // namespace spoor::testing
