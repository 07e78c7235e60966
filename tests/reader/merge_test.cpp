// The time-ordered merge across streams.
#include <algorithm>
#include <random>

#include "sample_trace.h"
#include "test_support.h"

namespace spoor::testing {
namespace {

TEST(Merge, SampleComesOutInTimeOrder) {
  reader::Trace trace = open_ok(sample_trace().bytes());
  reader::EventReader events(trace);
  std::vector<int64_t> times;
  std::vector<uint32_t> streams;
  reader::Event e;
  while (events.next(e)) {
    times.push_back(e.time_ns);
    streams.push_back(e.stream_id);
  }
  EXPECT_EQ(times, (std::vector<int64_t>{1000, 1200, 1500, 2500, 2600, 3000, 3100, 4000}));
  EXPECT_EQ(streams, (std::vector<uint32_t>{1, 2, 1, 2, 2, 1, 1, 2}));
  EXPECT_EQ(events.events_read(), 8u);
  EXPECT_EQ(events.events_read(1), 4u);
  EXPECT_EQ(events.events_read(2), 4u);
  EXPECT_EQ(events.events_read(9), 0u);
  EXPECT_TRUE(events.damages().empty());
  EXPECT_FALSE(events.next(e));  // and stays done
}

TEST(Merge, ManyStreamsInterleaveByTime) {
  std::mt19937 rng(7);
  TraceBuilder t;
  add_sample_metadata(t);
  constexpr uint32_t kStreams = 6;
  for (uint32_t s = 3; s < 3 + kStreams; ++s) t.stream(s, kSamplePid, s);
  std::vector<uint64_t> all;
  std::vector<PacketBuilder> packets;
  for (uint32_t s = 3; s < 3 + kStreams; ++s) {
    uint64_t time = rng() % 100;
    for (uint64_t seq = 0; seq < 5; ++seq) {
      PacketBuilder p(s, s, seq);
      for (int r = 0; r < 7; ++r) {
        time += 1 + rng() % 50;
        all.push_back(time);
        RecordBuilder rec = hello(time, static_cast<uint32_t>(time), "m");
        if (r == 0) rec.tid(s * 10);
        p.add(rec);
      }
      packets.push_back(p);
    }
  }
  // Drain order is not sequence order: shuffle the packets in the file.
  std::shuffle(packets.begin(), packets.end(), rng);
  for (const PacketBuilder& p : packets) t.packet(p);
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_TRUE(r.damages.empty());
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> got;
  for (const reader::Event& e : r.events) {
    got.push_back(e.ticks);
    EXPECT_EQ(e.cpu, e.stream_id);
    EXPECT_EQ(e.tid, e.stream_id * 10);
  }
  EXPECT_EQ(got, all);
}

TEST(Merge, EqualTimesKeepStreamOrder) {
  TraceBuilder t;
  add_sample_metadata(t);
  t.packet(PacketBuilder(2, 1, 0).add(hello(5, 2, "b").tid(1)));
  t.packet(PacketBuilder(1, 0, 0).add(hello(5, 1, "a").tid(1)));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].stream_id, 1u);  // first in Trace::streams()
}

TEST(Merge, EventsPointIntoTheTrace) {
  reader::Trace trace = open_ok(sample_trace().bytes());
  ReadAll r = read_all(trace);
  for (const reader::Event& e : r.events) {
    EXPECT_EQ(e.descriptor, trace.event(e.pid, e.descriptor->key));
    EXPECT_EQ(e.provider, trace.provider(kSamplePid, 0));
    EXPECT_GE(e.offset, trace.stream(e.stream_id)->packets[e.packet_sequence].data_offset);
  }
}

}  // namespace
}  // namespace spoor::testing
