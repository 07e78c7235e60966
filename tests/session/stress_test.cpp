// Many threads, millions of events, through a real session, its file and the
// reader: every record decodes, each thread's events arrive in order with
// their own tid, and events read + events lost == events written.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "session_test_util.h"
#include "spoor/event.h"
#include "spoor/host/session.h"
#include "spoor/reader/stream_stats.h"

namespace {

namespace reader = spoor::reader;

SPOOR_DEFINE_PROVIDER(g_stress, "Spoor.Test.Stress");
SPOOR_EVENT(kTick, g_stress, (spoor::EventInfo{.name = "Tick", .id = 1}),
            spoor::Field<uint32_t>{"thread"}, spoor::Field<uint64_t>{"seq"},
            spoor::Field<spoor::Str>{"pad"});

TEST(Stress, SixThreadsMillionsOfEventsThroughSessionAndReader) {
  constexpr uint32_t kThreads = 6;
  constexpr uint64_t kPerThread = 400000;
  const std::string path = spoor::test::temp_trace_path("stress");
  std::string error;
  // Small packets make many packet switches; a modest ring may drop some
  // events, which must then be counted, not lost silently.
  auto session = spoor::host::Session::start(
      {.output_path = path, .providers = "Spoor.Test.Stress", .buffer_bytes_per_cpu = 1u << 20,
       .packet_bytes = 4096},
      &error);
  ASSERT_TRUE(session) << error;
  static const char kPad[] = "0123456789abcdef";
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t)
    threads.emplace_back([t] {
      for (uint64_t i = 0; i < kPerThread; ++i) kTick.write(t, i, spoor::Str(kPad, i % 17));
    });
  for (auto& t : threads) t.join();
  const spoor::host::SessionStats stats = session->stop();
  EXPECT_EQ(stats.events + stats.lost, kThreads * kPerThread);
  EXPECT_EQ(stats.abandoned_bytes, 0u);
  EXPECT_TRUE(stats.write_error.empty()) << stats.write_error;

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_FALSE(trace->damage()) << trace->damage()->message;
  reader::EventReader events(trace.value());
  reader::Event e;
  uint64_t read = 0;
  std::map<uint32_t, int64_t> last_seq;  // per writer thread
  std::map<uint32_t, uint32_t> tid_of;
  int64_t last_time = INT64_MIN;
  uint64_t out_of_order = 0;
  while (events.next(e)) {
    ++read;
    const uint32_t t = static_cast<uint32_t>(std::get<uint64_t>(e.fields[0].value));
    const auto seq = static_cast<int64_t>(std::get<uint64_t>(e.fields[1].value));
    ASSERT_LT(t, kThreads);
    ASSERT_EQ(std::get<std::string_view>(e.fields[2].value), std::string_view(kPad, seq % 17));
    auto [it, first] = last_seq.emplace(t, seq);
    if (!first) {
      ASSERT_LT(it->second, seq) << "thread " << t << " went backwards";
      it->second = seq;
    }
    auto [tid, fresh] = tid_of.emplace(t, e.tid);
    ASSERT_EQ(tid->second, e.tid) << "one writer thread, one tid";
    if (e.time_ns < last_time) ++out_of_order;
    last_time = e.time_ns;
  }
  EXPECT_TRUE(events.damages().empty());
  EXPECT_EQ(read, stats.events);
  EXPECT_EQ(out_of_order, 0u) << "the reader hands events out in time order";
  uint64_t lost_in_file = 0;
  for (const auto& st : reader::stream_stats(trace.value())) lost_in_file += st.lost;
  EXPECT_EQ(lost_in_file, stats.lost);
  RecordProperty("read", std::to_string(read));
  RecordProperty("lost", std::to_string(stats.lost));
  std::filesystem::remove(path);
}

}  // namespace
