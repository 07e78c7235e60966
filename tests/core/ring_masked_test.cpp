// The single-core writer (spoor/ring_masked.h) on the host: the core built
// with SPOOR_PORT_HOOKS and SPOOR_SINGLE_CORE, and the platform hooks
// supplied here. The interrupt mask is a fake: irq_restore that unmasks runs
// a pending "interrupt" the way a Cortex-M takes a pending IRQ the moment
// PRIMASK clears, so a test can raise an event from inside another one's
// reserve/commit window. Short records (format 1.3) are checked through the
// ring's own walk (ring_peek), the test decoder and the reader.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "ring_test_util.h"
#include "spoor/compress/packed_blocks.h"
#include "spoor/event.h"
#include "spoor/reader/reader.h"
#include "spoor/trace_writer.h"

namespace {

// The fake platform: a settable clock, a thread id, an interrupt mask.
uint64_t g_now = 1000;
uint32_t g_thread = 1;
bool g_masked = false;
int g_unmasks_until_irq = 0;           // fire the pending interrupt at this unmask (0: none)
std::function<void()> g_pending_irq;
uint32_t g_clock_reads_unmasked = 0;

}  // namespace

extern "C" {
uint64_t spoor_port_ticks(void) {
  if (!g_masked) ++g_clock_reads_unmasked;
  return g_now;
}
uint32_t spoor_port_cpu(void) { return 0; }
uint32_t spoor_port_thread(void) { return g_thread; }
uint32_t spoor_port_irq_save(void) {
  const bool was = g_masked;
  g_masked = true;
  return was ? 1u : 0u;
}
void spoor_port_irq_restore(uint32_t state) {
  g_masked = state != 0;
  if (g_masked || !g_pending_irq || g_unmasks_until_irq == 0 || --g_unmasks_until_irq != 0) return;
  // The interrupt preempts whatever was running, with its own thread id.
  std::function<void()> handler = std::move(g_pending_irq);
  g_pending_irq = nullptr;
  const uint32_t interrupted = g_thread;
  handler();
  g_thread = interrupted;
}
}

namespace {

using spoor::test::DrainResult;
using spoor::test::Record;
using spoor::test::TestRing;
namespace fmt = spoor::format;

SPOOR_DEFINE_PROVIDER(g_fw, "Spoor.Test.SingleCore");
SPOOR_EVENT(kPair, g_fw, (spoor::EventInfo{.name = "Pair", .id = 1}),
            spoor::Field<uint32_t>{"value"}, spoor::Field<uint16_t>{"small"});
SPOOR_EVENT(kTwo, g_fw, (spoor::EventInfo{.name = "Two", .id = 2}),
            spoor::Field<uint32_t>{"a"}, spoor::Field<uint32_t>{"b"});
SPOOR_EVENT(kText, g_fw, (spoor::EventInfo{.name = "Text", .id = 3}),
            spoor::Field<spoor::Str>{"text"});

// Every event this file raises is one of these; `value` tells them apart.
struct Expected {
  uint64_t ticks;
  uint32_t value;
  uint32_t tid;
};

class SingleCoreRing : public ::testing::Test {
 protected:
  void SetUp() override {
    spoor::test::enable_all(g_fw);
    g_now = 1000;
    g_thread = 1;
    g_masked = false;
    g_unmasks_until_irq = 0;
    g_pending_irq = nullptr;
    g_clock_reads_unmasked = 0;
  }
  void TearDown() override {
    spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(g_fw.control()), {});
  }

  void pair(uint64_t at, uint32_t value) {
    g_now = at;
    kPair.write(value, static_cast<uint16_t>(value));
    expected_.push_back({at, value, g_thread});
  }

  // Takes every packet (flushing the open one): decoded strictly, and kept
  // as a trace so the reader can read the same packets.
  DrainResult drain_all(const spoor::RingView& v) {
    DrainResult got;
    spoor::ring_flush(v, 0);
    spoor::Packet p;
    while (spoor::ring_peek(v, 0, g_now, false, &p) == spoor::Status::ok) {
      spoor::test::decode_packet(p, got);
      packets_.push_back(p);
      packet_bytes_.emplace_back(p.data, p.data + p.size);
      packets_.back().data = nullptr;  // the copy in packet_bytes_ is used
      spoor::ring_release(v, 0, p);
      got.packets++;
    }
    return got;
  }

  // Writes the drained packets as a trace file (in memory).
  std::vector<uint8_t> trace_bytes() {
    std::vector<uint8_t> out;
    spoor::TraceWriter w(spoor::test::vector_sink(&out));
    EXPECT_EQ(w.file_header(), spoor::Status::ok);
    EXPECT_EQ(w.process(1, 0, "firmware", "", 0), spoor::Status::ok);
    EXPECT_EQ(w.stream(0, 1, 0), spoor::Status::ok);
    EXPECT_EQ(w.new_metadata(1), spoor::Status::ok);
    for (size_t i = 0; i < packets_.size(); ++i) {
      spoor::Packet p = packets_[i];
      p.data = packet_bytes_[i].data();
      EXPECT_EQ(w.packet(0, p), spoor::Status::ok);
    }
    EXPECT_EQ(w.stream_end(0, 0, 0, packets_.size()), spoor::Status::ok);
    return out;
  }

  std::vector<Expected> expected_;
  std::vector<spoor::Packet> packets_;
  std::vector<std::vector<uint8_t>> packet_bytes_;
};

uint32_t value_of(const Record& r) {
  uint32_t v = 0;
  std::memcpy(&v, r.body.data(), 4);
  return v;
}

TEST_F(SingleCoreRing, TwoFieldEventTakesTwelveBytesAsAShortRecord) {
  TestRing ring(1, 256, 4);
  pair(100, 1);  // opens the packet: long, with the tid
  pair(110, 2);
  g_now = 120;
  kTwo.write(3, 4);
  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 3u);
  EXPECT_FALSE(got.records[0].short_form);
  EXPECT_EQ(got.records[0].body.size() + fmt::kRecordHeaderSize + 4, 20u);  // 10 + tid 4 + 6
  EXPECT_TRUE(got.records[1].short_form);
  EXPECT_EQ(got.records[1].body.size() + fmt::kShortRecordHeaderSize, 12u);  // u32 + u16
  EXPECT_TRUE(got.records[2].short_form);
  EXPECT_EQ(got.records[2].body.size() + fmt::kShortRecordHeaderSize, 14u);  // u32 + u32
  EXPECT_EQ(got.records[2].ticks, 120u);
}

// Events with variable or larger fields take the general path (ring_claim),
// which writes short records too.
TEST_F(SingleCoreRing, StringEventTakesTheShortFormThroughTheGeneralPath) {
  TestRing ring(1, 256, 4);
  pair(100, 1);
  g_now = 130;
  kText.write("hey");
  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_TRUE(got.records[1].short_form);
  EXPECT_EQ(got.records[1].ticks, 130u);
  // 6 header + 1 length + 3 bytes, no padding.
  const std::vector<uint8_t> body{3, 'h', 'e', 'y'};
  EXPECT_EQ(got.records[1].body, body);
}

TEST_F(SingleCoreRing, ShortAndLongRecordsKeepExactTimesThroughPeekAndReader) {
  TestRing ring(1, 256, 8);
  // Small steps (short), a step of exactly 2^31 - 1 (still short), one of
  // 2^31 (long), the low 32 bits wrapping (short, widened across the wrap),
  // a jump of 2^40 (long), and enough events to open several packets (each
  // first record long).
  std::vector<uint64_t> times;
  uint64_t t = 5000;
  for (int i = 0; i < 30; ++i) times.push_back(t += 7);
  times.push_back(t += (1ull << 31) - 1);
  times.push_back(t += 1ull << 31);
  times.push_back(t = 0xFFFFFFF0ull + (3ull << 32));
  times.push_back(t += 0x20);  // low 32 bits wrap
  times.push_back(t += 1ull << 40);
  for (int i = 0; i < 30; ++i) times.push_back(t += 1 + i);
  for (size_t i = 0; i < times.size(); ++i) pair(times[i], static_cast<uint32_t>(i));

  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  EXPECT_GE(got.packets, 3u);
  ASSERT_EQ(got.records.size(), expected_.size());
  EXPECT_EQ(spoor::test::total_lost(ring.view()), 0u);
  uint64_t previous_packet = ~0ull;
  size_t shorts = 0;
  for (size_t i = 0; i < got.records.size(); ++i) {
    const Record& r = got.records[i];
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(r.ticks, expected_[i].ticks);
    EXPECT_EQ(value_of(r), expected_[i].value);
    const bool first_in_packet = r.packet_sequence != previous_packet;
    previous_packet = r.packet_sequence;
    const bool big_gap = i > 0 && expected_[i].ticks - expected_[i - 1].ticks >= (1ull << 31);
    EXPECT_EQ(r.short_form, !first_in_packet && !big_gap);
    shorts += r.short_form;
  }
  EXPECT_GT(shorts, got.records.size() / 2);

  // The reader sees the same events at the same times.
  const std::vector<uint8_t> bytes = trace_bytes();
  auto trace = spoor::reader::Trace::from_bytes(bytes);
  ASSERT_TRUE(trace.ok()) << trace.error();
  spoor::reader::EventReader events(trace.value());
  spoor::reader::Event e;
  size_t n = 0;
  while (events.next(e)) {
    ASSERT_LT(n, expected_.size());
    SCOPED_TRACE("event " + std::to_string(n));
    EXPECT_EQ(e.ticks, expected_[n].ticks);
    EXPECT_EQ(e.tid, expected_[n].tid);
    ASSERT_EQ(e.descriptor->name, "Pair");
    EXPECT_EQ(std::get<uint64_t>(e.fields[0].value), expected_[n].value);
    EXPECT_EQ(std::get<uint64_t>(e.fields[1].value), expected_[n].value & 0xFFFF);
    ++n;
  }
  EXPECT_TRUE(events.damages().empty()) << events.damages()[0].message;
  EXPECT_EQ(n, expected_.size());
}

TEST_F(SingleCoreRing, ThreadChangeAndActivityIdsUseTheLongForm) {
  TestRing ring(1, 256, 4);
  pair(10, 0);
  pair(20, 1);
  g_thread = 2;
  pair(30, 2);  // thread changed: long with the tid
  pair(40, 3);  // same thread again: short
  g_now = 50;
  const spoor::ActivityId id{};
  kPair.write_activity(id, nullptr, 4, 4);  // activity id: long
  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 5u);
  const bool want_short[] = {false, true, false, true, false};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(got.records[i].short_form, want_short[i]) << i;
  EXPECT_TRUE(got.records[2].carried_tid);
  EXPECT_EQ(got.records[3].tid, 2u);
}

TEST_F(SingleCoreRing, ClockIsReadWithInterruptsMasked) {
  TestRing ring(1, 256, 4);
  for (uint32_t i = 0; i < 100; ++i) pair(10 + i, i);  // fast and slow paths
  EXPECT_EQ(g_clock_reads_unmasked, 0u);
  EXPECT_FALSE(g_masked);
}

// An interrupt taken right after the reservation (at the unmask), before the
// fields and the commit: its record lands after ours, a drain from inside
// the interrupt waits for ours (busy), and both are intact afterwards.
TEST_F(SingleCoreRing, InterruptBetweenReserveAndCommitWritesAfterTheRecordItInterrupts) {
  TestRing ring(1, 256, 4);
  pair(10, 1);  // opens the packet, so the next write takes the fast path
  spoor::Status drain_in_irq = spoor::Status::ok;
  g_unmasks_until_irq = 1;
  g_pending_irq = [&] {
    g_thread = 100;
    pair(30, 0xBEEF);
    spoor::ring_flush(ring.view(), 0);
    spoor::Packet p;
    drain_in_irq = spoor::ring_peek(ring.view(), 0, g_now, false, &p);
  };
  pair(20, 2);  // the interrupt fires inside this write
  EXPECT_FALSE(g_pending_irq);
  EXPECT_EQ(drain_in_irq, spoor::Status::busy);  // record 2 was reserved, not committed
  // expected_ got 0xBEEF before 2 (the handler returned first): the ring
  // order is reservation order, so swap them to match.
  ASSERT_EQ(expected_.size(), 3u);
  std::swap(expected_[1], expected_[2]);

  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(value_of(got.records[i]), expected_[i].value) << i;
    EXPECT_EQ(got.records[i].ticks, expected_[i].ticks) << i;
    EXPECT_EQ(got.records[i].tid, expected_[i].tid) << i;
  }
  EXPECT_TRUE(got.records[1].short_form);   // main thread, 10 ticks later
  EXPECT_TRUE(got.records[2].carried_tid);  // the interrupt's own thread id
}

// The same inside the slow path: the interrupt fires at the slow path's
// unmask, after it opened the packet and reserved our record.
TEST_F(SingleCoreRing, InterruptAfterAPacketIsOpenedWritesAfterTheOpeningRecord) {
  TestRing ring(1, 256, 4);
  // The fast path hands over to the slow path still masked: the first
  // unmask is the slow path's, after the reservation.
  g_unmasks_until_irq = 1;
  g_pending_irq = [&] { pair(30, 0xBEEF); };  // same thread: may be short
  pair(20, 1);
  ASSERT_EQ(expected_.size(), 2u);
  std::swap(expected_[0], expected_[1]);
  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_EQ(value_of(got.records[0]), 1u);
  EXPECT_EQ(got.records[0].ticks, 20u);
  EXPECT_FALSE(got.records[0].short_form);
  EXPECT_EQ(value_of(got.records[1]), 0xBEEFu);
  EXPECT_EQ(got.records[1].ticks, 30u);
  EXPECT_TRUE(got.records[1].short_form);
}

TEST_F(SingleCoreRing, FullRingDropsAndCountsEveryEventItCouldNotTake) {
  TestRing ring(1, 256, 2);
  const uint32_t kEvents = 200;
  for (uint32_t i = 0; i < kEvents; ++i) pair(10 + i, i);
  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  const uint64_t lost = spoor::test::total_lost(ring.view());
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(got.records.size() + lost, kEvents);
  // What was kept is the oldest events, in order.
  for (size_t i = 0; i < got.records.size(); ++i) EXPECT_EQ(value_of(got.records[i]), i);
}

// A short record whose size runs past its packet: ring_peek stops the walk
// there (never reading beyond), and the reader reports damage, not a crash.
TEST_F(SingleCoreRing, CorruptShortRecordIsReportedAsDamage) {
  TestRing ring(1, 256, 4);
  for (uint32_t i = 0; i < 4; ++i) pair(10 + i, i);
  DrainResult got = drain_all(ring.view());
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(packet_bytes_.size(), 1u);
  std::vector<uint8_t>& data = packet_bytes_[0];
  const size_t second = 20;  // after the first record: 10 header + 4 tid + 6 fields
  ASSERT_EQ(data[second] & 1, 1);
  data[second] = 0xFF;  // a 254-byte short record in a packet of 56 bytes

  const std::vector<uint8_t> bytes = trace_bytes();
  auto trace = spoor::reader::Trace::from_bytes(bytes);
  ASSERT_TRUE(trace.ok()) << trace.error();
  spoor::reader::EventReader events(trace.value());
  spoor::reader::Event e;
  size_t n = 0;
  while (events.next(e)) ++n;
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(events.damages().size(), 1u);
  EXPECT_NE(events.damages()[0].message.find("short record of 254 bytes runs past"), std::string::npos)
      << events.damages()[0].message;

  // The same bytes in the ring itself: a final drain keeps the good record
  // and counts the rest as abandoned.
  TestRing again(1, 256, 4);
  for (uint32_t i = 0; i < 4; ++i) pair(10 + i, i);
  spoor::ring_flush(again.view(), 0);
  spoor::Packet p;
  ASSERT_EQ(spoor::ring_peek(again.view(), 0, g_now, true, &p), spoor::Status::ok);
  const uint32_t span = p.span;
  again.view().data[second] = 0xFF;
  ASSERT_EQ(spoor::ring_peek(again.view(), 0, g_now, true, &p), spoor::Status::ok);
  EXPECT_EQ(p.record_count, 1u);
  EXPECT_EQ(p.size, second);
  EXPECT_EQ(again.view().cpus[0].abandoned_bytes, span - second);
}

TEST_F(SingleCoreRing, ShortRecordFirstInItsPacketIsReportedAsDamage) {
  TestRing ring(1, 256, 4);
  for (uint32_t i = 0; i < 3; ++i) pair(10 + i, i);
  drain_all(ring.view());
  ASSERT_EQ(packet_bytes_.size(), 1u);
  // Drop the first (long) record: the packet now starts with a short one.
  std::vector<uint8_t>& data = packet_bytes_[0];
  data.erase(data.begin(), data.begin() + 20);
  packets_[0].size = static_cast<uint32_t>(data.size());
  packets_[0].record_count = 2;
  const std::vector<uint8_t> bytes = trace_bytes();
  auto trace = spoor::reader::Trace::from_bytes(bytes);
  ASSERT_TRUE(trace.ok()) << trace.error();
  spoor::reader::EventReader events(trace.value());
  spoor::reader::Event e;
  EXPECT_FALSE(events.next(e));
  ASSERT_EQ(events.damages().size(), 1u);
  EXPECT_NE(events.damages()[0].message.find("first record is a short record"), std::string::npos)
      << events.damages()[0].message;
}

// Packing a run that holds short records: the column layouts take long
// records only, so the packer keeps the blocks as they are (layout 0) and
// they come back byte for byte.
TEST_F(SingleCoreRing, CompressionKeepsPacketsWithShortRecordsAsBlocks) {
  TestRing ring(1, 256, 4);
  for (uint32_t i = 0; i < 12; ++i) pair(10 + i, i);
  drain_all(ring.view());
  const std::vector<uint8_t> bytes = trace_bytes();
  const size_t header = sizeof(fmt::FileHeader);
  const std::span<const uint8_t> blocks(bytes.data() + header, bytes.size() - header);
  for (uint16_t layout : {fmt::kLayoutRecordColumns, fmt::kLayoutReferenceColumns, fmt::kLayoutStepTimes,
                          fmt::kLayoutWideRows}) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    spoor::compress::Packer packer(3, layout);
    std::vector<uint8_t> payload;
    std::string problem;
    ASSERT_TRUE(packer.pack(blocks, payload, &problem)) << problem;
    fmt::CompressedBlock h{};
    std::memcpy(&h, payload.data(), sizeof h);
    EXPECT_EQ(h.layout, fmt::kLayoutBlocks);
    spoor::compress::ExpandedBytes back;
    ASSERT_TRUE(spoor::compress::unpack(payload, back, problem)) << problem;
    EXPECT_TRUE(std::equal(back.begin(), back.end(), blocks.begin(), blocks.end()));
  }
}

}  // namespace
