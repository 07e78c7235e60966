// Per-stream statistics and loss intervals.
#include "sample_trace.h"
#include "test_support.h"

namespace spoor::testing {
namespace {

TEST(StreamStats, LossIntervalsFollowTheRunningCount) {
  TraceBuilder t;
  add_sample_metadata(t);
  auto packet = [](uint64_t seq, uint64_t lost, uint64_t begin, uint64_t end) {
    return PacketBuilder(1, 0, seq)
        .lost_total(lost)
        .add(hello(begin, 0, "").tid(1))
        .add(hello(end, 0, ""));
  };
  t.packet(packet(0, 0, 100, 200));
  t.packet(packet(1, 5, 300, 400));
  t.packet(packet(2, 5, 500, 600));
  t.packet(packet(3, 12, 700, 800));
  t.stream_end(1, 15, 64, 4);
  reader::Trace trace = open_ok(t.bytes());
  const reader::StreamStats s = reader::stream_stats(trace, *trace.stream(1));
  EXPECT_EQ(s.packets, 4u);
  EXPECT_EQ(s.records, 8u);
  EXPECT_EQ(s.lost, 15u);
  EXPECT_EQ(s.missing_packets, 0u);
  EXPECT_EQ(s.abandoned_bytes, 64u);
  EXPECT_TRUE(s.ended);
  ASSERT_EQ(s.losses.size(), 3u);
  EXPECT_EQ(s.losses[0].lost, 5u);
  EXPECT_EQ(s.losses[0].begin_ns, 200);
  EXPECT_EQ(s.losses[0].end_ns, 400);
  EXPECT_EQ(s.losses[1].lost, 7u);
  EXPECT_EQ(s.losses[1].begin_ns, 600);
  EXPECT_EQ(s.losses[1].end_ns, 800);
  EXPECT_EQ(s.losses[1].cpu, 0u);
  EXPECT_EQ(s.losses[2].lost, 3u);
  EXPECT_TRUE(s.losses[2].after_last_packet);
  EXPECT_EQ(s.losses[2].begin_ns, 800);
}

TEST(StreamStats, LossesInTheFirstPacketStartAtItsBegin) {
  TraceBuilder t;
  add_sample_metadata(t);
  t.packet(PacketBuilder(2, 1, 0).lost_total(9).add(hello(50, 0, "").tid(1)).add(hello(90, 0, "")));
  reader::Trace trace = open_ok(t.bytes());
  const reader::StreamStats s = reader::stream_stats(trace, *trace.stream(2));
  ASSERT_EQ(s.losses.size(), 1u);
  EXPECT_EQ(s.losses[0].lost, 9u);
  EXPECT_EQ(s.losses[0].begin_ns, 50);
  EXPECT_EQ(s.losses[0].end_ns, 90);
  EXPECT_EQ(s.losses[0].cpu, 1u);
  EXPECT_FALSE(s.ended);
  EXPECT_EQ(s.lost, 9u);
}

TEST(StreamStats, SequenceGapsCountMissingPackets) {
  TraceBuilder t;
  add_sample_metadata(t);
  for (uint64_t seq : {0, 1, 4, 5, 7})
    t.packet(PacketBuilder(1, 0, seq).add(hello(seq * 10, 0, "").tid(1)));
  reader::Trace trace = open_ok(t.bytes());
  const std::vector<reader::StreamStats> all = reader::stream_stats(trace);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].missing_packets, 3u);
  EXPECT_EQ(all[0].sequence_gaps, 2u);
  EXPECT_EQ(all[0].packets, 5u);
  EXPECT_EQ(all[1].packets, 0u);
  EXPECT_EQ(all[1].lost, 0u);
}

TEST(StreamStats, SampleTrace) {
  reader::Trace trace = open_ok(sample_trace().bytes());
  const std::vector<reader::StreamStats> all = reader::stream_stats(trace);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].lost, 4u);
  ASSERT_EQ(all[0].losses.size(), 1u);
  EXPECT_EQ(all[0].losses[0].begin_ns, 1500);  // end of packet 0
  EXPECT_EQ(all[0].losses[0].end_ns, 3100);    // end of packet 1
  EXPECT_TRUE(all[1].losses.empty());
}

}  // namespace
}  // namespace spoor::testing
