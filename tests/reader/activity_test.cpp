// Start/stop matching.
#include "sample_trace.h"
#include "test_support.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

TEST(ActivityStem, StripsStartAndStopSuffixes) {
  EXPECT_EQ(reader::activity_stem("ReadStart"), "Read");
  EXPECT_EQ(reader::activity_stem("ReadStop"), "Read");
  EXPECT_EQ(reader::activity_stem("Read_stop"), "Read");
  EXPECT_EQ(reader::activity_stem("read/START"), "read");
  EXPECT_EQ(reader::activity_stem("Read"), "Read");
  EXPECT_EQ(reader::activity_stem("Start"), "Start");
}

TEST(Activities, SampleReadIsMatchedByActivityId) {
  reader::Trace trace = open_ok(sample_trace().bytes());
  reader::ActivityMatches m = reader::match_activities(trace);
  ASSERT_EQ(m.spans.size(), 1u);
  EXPECT_EQ(m.spans[0].kind, "Read");
  EXPECT_EQ(m.spans[0].duration_ns(), 1500);
  EXPECT_EQ(m.spans[0].start->name, "ReadStart");
  EXPECT_EQ(m.spans[0].stop->name, "ReadStop");
  EXPECT_EQ(m.spans[0].provider->name, "Demo.Provider");
  EXPECT_EQ(m.unmatched_starts, 0u);
  EXPECT_EQ(m.unmatched_stops, 0u);
}

// Events: 1 Begin (task 7, start), 2 End (task 7, stop), 3 FetchStart, 4
// FetchStop (task 0), all of pid 100's provider 0.
TraceBuilder activity_trace() {
  TraceBuilder t;
  t.clock_ns();
  t.process(kSamplePid, "demo");
  t.stream(1, kSamplePid, 0);
  t.stream(2, kSamplePid, 1);
  t.provider(kSamplePid, 0, "Net");
  t.event({.pid = kSamplePid, .key = 1, .opcode = fmt::kOpStart, .task = 7, .name = "Begin", .fields = {}});
  t.event({.pid = kSamplePid, .key = 2, .opcode = fmt::kOpStop, .task = 7, .name = "End", .fields = {}});
  t.event({.pid = kSamplePid, .key = 3, .opcode = fmt::kOpStart, .name = "FetchStart", .fields = {}});
  t.event({.pid = kSamplePid, .key = 4, .opcode = fmt::kOpStop, .name = "FetchStop", .fields = {}});
  return t;
}

TEST(Activities, OverlappingActivitiesMatchAcrossStreams) {
  TraceBuilder t = activity_trace();
  const Guid16 a = guid_from_seed(1), b = guid_from_seed(2), c = guid_from_seed(3);
  // a: 100..400 (starts on cpu 0, stops on cpu 1); b: 150..250; c never stops.
  t.packet(PacketBuilder(1, 0, 0)
               .add(RecordBuilder(1, 100).tid(1).activity(a))
               .add(RecordBuilder(1, 150).activity(b))
               .add(RecordBuilder(1, 160).activity(c)));
  t.packet(PacketBuilder(2, 1, 0)
               .add(RecordBuilder(2, 250).tid(2).activity(b))
               .add(RecordBuilder(2, 400).activity(a))
               .add(RecordBuilder(2, 500).activity(guid_from_seed(9))));  // no start
  reader::Trace trace = open_ok(t.bytes());
  reader::ActivityMatches m = reader::match_activities(trace);
  ASSERT_EQ(m.spans.size(), 2u);
  EXPECT_EQ(m.spans[0].activity_id->bytes, b);
  EXPECT_EQ(m.spans[0].duration_ns(), 100);
  EXPECT_EQ(m.spans[1].activity_id->bytes, a);
  EXPECT_EQ(m.spans[1].duration_ns(), 300);
  EXPECT_EQ(m.spans[1].kind, "Begin (task 7)");
  EXPECT_EQ(m.spans[1].task, 7);
  EXPECT_EQ(m.unmatched_starts, 1u);
  EXPECT_EQ(m.unmatched_stops, 1u);
  ASSERT_EQ(m.still_open.size(), 1u);  // c
  EXPECT_EQ(m.still_open[0].activity_id->bytes, c);
  EXPECT_EQ(m.still_open[0].start_ns, 160);
  EXPECT_EQ(m.still_open[0].stop, nullptr);
  EXPECT_EQ(m.restarted(), 0u);
}

TEST(Activities, StartsNeverStoppedAreListedApartFromRestartsAndCountedPerKind) {
  TraceBuilder t = activity_trace();
  const Guid16 a = guid_from_seed(1);
  // Fetch: tid 1 stops, tid 2 never does (a thread alive at its process's
  // end). Begin: activity a starts twice before its one stop, then again.
  t.packet(PacketBuilder(1, 0, 0)
               .add(RecordBuilder(3, 100).tid(1))
               .add(RecordBuilder(3, 110).tid(2))
               .add(RecordBuilder(1, 120).tid(1).activity(a))
               .add(RecordBuilder(1, 130).activity(a))
               .add(RecordBuilder(4, 140).tid(1))
               .add(RecordBuilder(2, 150).activity(a))
               .add(RecordBuilder(1, 160).activity(a)));
  reader::Trace trace = open_ok(t.bytes());
  reader::ActivityMatches m = reader::match_activities(trace);
  ASSERT_EQ(m.still_open.size(), 2u);  // in start order
  EXPECT_EQ(m.still_open[0].kind, "Fetch");
  EXPECT_EQ(m.still_open[0].tid, 2u);
  EXPECT_EQ(m.still_open[0].start_ns, 110);
  EXPECT_EQ(m.still_open[1].kind, "Begin (task 7)");
  EXPECT_EQ(m.still_open[1].start_ns, 160);
  EXPECT_EQ(m.restarted(), 1u);
  EXPECT_EQ(m.unmatched_starts, 3u);

  const std::vector<reader::ActivitySummary> kinds = reader::summarize(m.spans, m.still_open);
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].kind, "Begin (task 7)");
  EXPECT_EQ(kinds[0].count, 1u);
  EXPECT_EQ(kinds[0].still_open, 1u);
  EXPECT_EQ(kinds[0].min_ns, 20);  // the restart at 130 replaced the start at 120
  EXPECT_EQ(kinds[1].kind, "Fetch");
  EXPECT_EQ(kinds[1].count, 1u);
  EXPECT_EQ(kinds[1].still_open, 1u);
  EXPECT_EQ(kinds[1].max_ns, 40);

  // A kind none of whose starts stopped still has a row.
  const auto open_only = reader::summarize({}, m.still_open);
  ASSERT_EQ(open_only.size(), 2u);
  EXPECT_EQ(open_only[1].count, 0u);
  EXPECT_EQ(open_only[1].still_open, 1u);
}

TEST(Activities, WithoutActivityIdsMatchTheInnermostStartOnTheThread) {
  TraceBuilder t = activity_trace();
  t.packet(PacketBuilder(1, 0, 0)
               .add(RecordBuilder(3, 100).tid(1))   // outer
               .add(RecordBuilder(3, 110).tid(2))   // another thread
               .add(RecordBuilder(3, 120).tid(1))   // inner
               .add(RecordBuilder(4, 130))          // closes inner (tid 1)
               .add(RecordBuilder(4, 200).tid(2))   // closes thread 2's
               .add(RecordBuilder(4, 300).tid(1))); // closes outer
  reader::Trace trace = open_ok(t.bytes());
  reader::ActivityMatches m = reader::match_activities(trace);
  ASSERT_EQ(m.spans.size(), 3u);
  EXPECT_EQ(m.spans[0].duration_ns(), 10);
  EXPECT_EQ(m.spans[1].duration_ns(), 90);
  EXPECT_EQ(m.spans[1].tid, 2u);
  EXPECT_EQ(m.spans[2].duration_ns(), 200);
  EXPECT_EQ(m.spans[2].kind, "Fetch");
  EXPECT_FALSE(m.spans[2].activity_id.has_value());

  const std::vector<reader::ActivitySummary> kinds = reader::summarize(m.spans);
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds[0].kind, "Fetch");
  EXPECT_EQ(kinds[0].count, 3u);
  EXPECT_EQ(kinds[0].min_ns, 10);
  EXPECT_EQ(kinds[0].median_ns, 90);
  EXPECT_EQ(kinds[0].max_ns, 200);
}

TEST(Activities, KindsDoNotMix) {
  TraceBuilder t = activity_trace();
  const Guid16 a = guid_from_seed(1);
  // A Fetch stop cannot close a task-7 start, even with the same activity.
  t.packet(PacketBuilder(1, 0, 0)
               .add(RecordBuilder(1, 100).tid(1).activity(a))
               .add(RecordBuilder(4, 150).activity(a))
               .add(RecordBuilder(2, 200).activity(a)));
  reader::Trace trace = open_ok(t.bytes());
  reader::ActivityMatches m = reader::match_activities(trace);
  ASSERT_EQ(m.spans.size(), 1u);
  EXPECT_EQ(m.spans[0].duration_ns(), 100);
  EXPECT_EQ(m.unmatched_stops, 1u);
}

TEST(Activities, SummaryMedianOfAnEvenCountIsTheLowerOne) {
  std::vector<reader::ActivitySpan> spans(4);
  const int64_t d[] = {40, 10, 30, 20};
  for (size_t i = 0; i < 4; ++i) {
    spans[i].kind.assign(1, 'K');  // not = "K": GCC 12 -O3 false -Wrestrict
    spans[i].stop_ns = d[i];
  }
  const auto kinds = reader::summarize(spans);
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds[0].median_ns, 20);
  EXPECT_EQ(kinds[0].min_ns, 10);
  EXPECT_EQ(kinds[0].max_ns, 40);
}

TEST(Activities, OneProviderInSeveralProcessesIsOneRowAndRowsFollowNames) {
  // Each process has a Provider of its own: two processes' Spoor.Thread,
  // one of them listed first, and a provider whose name sorts before.
  reader::Provider second_process{.pid = 2, .index = 0, .guid = {}, .name = "Spoor.Thread"};
  reader::Provider first_process{.pid = 1, .index = 0, .guid = {}, .name = "Spoor.Thread"};
  reader::Provider other{.pid = 1, .index = 1, .guid = {}, .name = "App.Requests"};
  second_process.guid.bytes[0] = first_process.guid.bytes[0] = 7;
  std::vector<reader::ActivitySpan> spans(4);
  const reader::Provider* providers[] = {&second_process, &first_process, &other, &first_process};
  for (size_t i = 0; i < spans.size(); ++i) {
    spans[i].provider = providers[i];
    spans[i].kind.assign(i == 2 ? "Request" : "Thread");
    spans[i].stop_ns = static_cast<int64_t>(10 * (i + 1));
  }
  const auto kinds = reader::summarize(spans);
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].provider, &other);
  EXPECT_EQ(kinds[0].count, 1u);
  EXPECT_EQ(kinds[1].provider->name, "Spoor.Thread");
  EXPECT_EQ(kinds[1].count, 3u);
  EXPECT_EQ(kinds[1].min_ns, 10);
  EXPECT_EQ(kinds[1].max_ns, 40);
}

}  // namespace
}  // namespace spoor::testing
