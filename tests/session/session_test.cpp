// Hosted sessions: enable specs filter what is written, enable state changes
// while running (also from another mapping of the control block), lost
// events are counted and reported, bad options are refused clearly.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "session_test_util.h"
#include "spoor/control.h"
#include "spoor/event.h"
#include "spoor/host/session.h"
#include "spoor/reader/stream_stats.h"

namespace {

namespace reader = spoor::reader;
using spoor::host::Session;

SPOOR_DEFINE_PROVIDER(g_session_test, "Spoor.Test.Session");

SPOOR_EVENT(kInfoKw1, g_session_test,
            (spoor::EventInfo{.name = "InfoKw1", .id = 1, .level = spoor::Level::info, .keywords = 0x1}),
            spoor::Field<uint32_t>{"n"});
SPOOR_EVENT(kVerboseKw1, g_session_test,
            (spoor::EventInfo{.name = "VerboseKw1", .id = 2, .level = spoor::Level::verbose, .keywords = 0x1}),
            spoor::Field<uint32_t>{"n"});
SPOOR_EVENT(kInfoKw2, g_session_test,
            (spoor::EventInfo{.name = "InfoKw2", .id = 3, .level = spoor::Level::info, .keywords = 0x2}),
            spoor::Field<uint32_t>{"n"});
SPOOR_EVENT(kAlways, g_session_test,
            (spoor::EventInfo{.name = "Always", .id = 4, .level = spoor::Level::always}),
            spoor::Field<uint32_t>{"n"});

std::vector<std::string> names_in(const std::string& path) {
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  std::vector<std::string> names;
  if (!trace) return names;
  for (const auto& e : spoor::test::read_all(trace.value()).events)
    names.push_back(e.descriptor->name + ":" + std::to_string(std::get<uint64_t>(e.fields.at(0).value)));
  return names;
}

TEST(Session, SpecFiltersByLevelAndKeywords) {
  const std::string path = spoor::test::temp_trace_path("filter");
  std::string error;
  auto s = Session::start({.output_path = path, .providers = "Spoor.Test.Session:0x1:info"}, &error);
  ASSERT_TRUE(s) << error;
  kInfoKw1.write(1);
  kVerboseKw1.write(2);  // level too high
  kInfoKw2.write(3);     // keyword not enabled
  kAlways.write(4);      // no keywords, level 0: always passes
  s->stop();
  EXPECT_EQ(names_in(path), (std::vector<std::string>{"InfoKw1:1", "Always:4"}));
}

TEST(Session, CompressedSessionFileReadsTheSameEvents) {
  const std::string path = spoor::test::temp_trace_path("compressed");
  std::string error;
  spoor::host::SessionOptions options{.output_path = path, .providers = "Spoor.Test.Session"};
  options.compression.enabled = true;
  options.compression.run_bytes = 64 << 10;  // several COMPRESSED blocks
  auto s = Session::start(options, &error);
  ASSERT_TRUE(s) << error;
  constexpr uint32_t kEvents = 50000;
  for (uint32_t i = 0; i < kEvents; ++i) kInfoKw1.write(i);
  const spoor::host::SessionStats stats = s->stop();
  EXPECT_EQ(stats.lost, 0u);
  EXPECT_GT(stats.compression.blocks, 1u);
  EXPECT_LT(stats.compression.packed_bytes * 2, stats.compression.raw_bytes);

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_EQ(stats.bytes, trace->file_size());
  EXPECT_EQ(trace->compression().blocks, stats.compression.blocks);
  const auto all = spoor::test::read_all(trace.value());
  EXPECT_EQ(all.damages, 0u);
  ASSERT_EQ(all.events.size(), kEvents);
  std::vector<bool> seen(kEvents, false);
  for (const auto& e : all.events) seen.at(std::get<uint64_t>(e.fields.at(0).value)) = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), kEvents);
}

TEST(Session, EnableChangesWhileRunning) {
  const std::string path = spoor::test::temp_trace_path("enable");
  std::string error;
  auto s = Session::start({.output_path = path, .providers = "Some.Other.Provider"}, &error);
  ASSERT_TRUE(s) << error;
  kInfoKw1.write(1);
  ASSERT_TRUE(s->enable("Spoor.Test.Session::verbose", &error)) << error;
  kVerboseKw1.write(2);
  EXPECT_FALSE(s->enable("Spoor.Test.Session:nonsense", &error));
  EXPECT_NE(error.find("nonsense"), std::string::npos);
  kInfoKw2.write(3);  // the old rules stay after a bad spec
  ASSERT_TRUE(s->enable("Spoor.Test.Session::error", &error)) << error;
  kInfoKw1.write(4);
  s->stop();
  EXPECT_EQ(names_in(path), (std::vector<std::string>{"VerboseKw1:2", "InfoKw2:3"}));
}

// A controller maps the control block by its file descriptor (another
// process would map /proc/PID/fd/N or a passed fd) and flips the level.
TEST(Session, ControlBlockMappedElsewhereChangesTheNextEvent) {
  const std::string path = spoor::test::temp_trace_path("control");
  std::string error;
  auto s = Session::start({.output_path = path, .providers = "Spoor.Test.Session"}, &error);
  ASSERT_TRUE(s) << error;
  const size_t size = spoor::ControlBlock::bytes_for(SPOOR_MAX_PROVIDERS);
  void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->control_fd(), 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* block = static_cast<spoor::ControlBlock*>(mapped);
  EXPECT_EQ(block->magic, spoor::kControlMagic);
  spoor::ProviderControl* slot = nullptr;
  for (uint32_t i = 0; i < block->count.load(); ++i)
    if (std::memcmp(block->slots()[i].id, g_session_test.id().bytes, 16) == 0) slot = &block->slots()[i];
  ASSERT_NE(slot, nullptr) << "the provider's slot is found by its ID";
  ASSERT_NE(static_cast<const void*>(slot), static_cast<const void*>(g_session_test.control()))
      << "a second mapping, not the program's own pointer";
  kInfoKw1.write(1);
  slot->level_plus1.store(0);  // disable
  kInfoKw1.write(2);
  slot->level_plus1.store(spoor::level_plus1_for(4));  // info
  kInfoKw1.write(3);
  kVerboseKw1.write(4);
  munmap(mapped, size);
  s->stop();
  EXPECT_EQ(names_in(path), (std::vector<std::string>{"InfoKw1:1", "InfoKw1:3"}));
}

TEST(Session, LostEventsAreCountedAndReportedPerStream) {
  const std::string path = spoor::test::temp_trace_path("lost");
  std::string error;
  // Two 256-byte packets per CPU and a drainer that looks once a second: a
  // burst must overflow.
  auto s = Session::start({.output_path = path, .providers = "Spoor.Test.Session",
                           .buffer_bytes_per_cpu = 512, .packet_bytes = 256,
                           .drain_interval_us = 1000000, .flush_interval_ms = 100000},
                          &error);
  ASSERT_TRUE(s) << error;
  constexpr uint32_t kWritten = 10000;
  for (uint32_t i = 0; i < kWritten; ++i) kInfoKw1.write(i);
  const spoor::host::SessionStats stats = s->stop();
  EXPECT_GT(stats.lost, 0u);
  EXPECT_EQ(stats.events + stats.lost, kWritten);

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_EQ(spoor::test::read_all(trace.value()).events.size(), stats.events);
  uint64_t lost_in_file = 0, intervals = 0;
  for (const auto& st : reader::stream_stats(trace.value())) {
    lost_in_file += st.lost;
    uint64_t in_intervals = 0;
    for (const auto& l : st.losses) in_intervals += l.lost;
    EXPECT_EQ(in_intervals, st.lost) << "every lost event is placed in an interval";
    intervals += st.losses.size();
  }
  EXPECT_EQ(lost_in_file, stats.lost);
  EXPECT_GT(intervals, 0u);
}

TEST(Session, PartlyFilledPacketsReachTheFileWhileRunning) {
  const std::string path = spoor::test::temp_trace_path("flush");
  std::string error;
  auto s = Session::start({.output_path = path, .providers = "Spoor.Test.Session", .flush_interval_ms = 20},
                          &error);
  ASSERT_TRUE(s) << error;
  kInfoKw1.write(7);
  // Poll (no timing assertion: the test passes as soon as the event shows).
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto trace = reader::Trace::open(path);
    if (trace) seen = !spoor::test::read_all(trace.value()).events.empty();
  }
  EXPECT_TRUE(seen) << "the open packet was flushed to the file before stop";
  s->stop();
}

TEST(Session, StopDoesNotWaitOutTheDrainInterval) {
  const std::string path = spoor::test::temp_trace_path("stop");
  std::string error;
  auto s = Session::start({.output_path = path, .providers = "Spoor.Test.Session",
                           .drain_interval_us = 600'000'000},  // ten minutes
                          &error);
  ASSERT_TRUE(s) << error;
  kInfoKw1.write(1);
  // Not a timing assertion: if stop() slept out the interval, this test
  // would hit CTest's timeout instead of finishing.
  s->stop();
  EXPECT_EQ(names_in(path), (std::vector<std::string>{"InfoKw1:1"}));
}

TEST(Session, RefusesBadOptionsWithClearMessages) {
  std::string error;
  EXPECT_FALSE(Session::start({.output_path = "/nonexistent-dir/x.spoor"}, &error));
  EXPECT_NE(error.find("/nonexistent-dir/x.spoor"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;

  EXPECT_FALSE(Session::start({.output_path = "/tmp/x.spoor", .providers = "A:0x1:loud"}, &error));
  EXPECT_NE(error.find("loud"), std::string::npos) << error;

  EXPECT_FALSE(Session::start({.output_path = "/tmp/x.spoor", .packet_bytes = 1000}, &error));
  EXPECT_NE(error.find("power of two"), std::string::npos) << error;

  const std::string path = spoor::test::temp_trace_path("twice");
  auto first = Session::start({.output_path = path}, &error);
  ASSERT_TRUE(first) << error;
  EXPECT_FALSE(Session::start({.output_path = path + "2"}, &error));
  EXPECT_NE(error.find("already running"), std::string::npos) << error;
  first->stop();
  auto again = Session::start({.output_path = path}, &error);
  EXPECT_TRUE(again) << "a new session can start after the first stopped: " << error;
}

TEST(Session, AFullDiskIsReportedNotIgnored) {
  std::string error;
  EXPECT_FALSE(Session::start({.output_path = "/dev/full"}, &error));
  EXPECT_NE(error.find("No space left"), std::string::npos) << error;
}

TEST(Session, AForkedChildWritesNothingIntoTheParentsTrace) {
  const std::string path = spoor::test::temp_trace_path("fork");
  std::string error;
  auto s = Session::start({.output_path = path, .providers = "Spoor.Test.Session"}, &error);
  ASSERT_TRUE(s) << error;
  kInfoKw1.write(1);
  const pid_t child = fork();
  if (child == 0) {
    for (uint32_t i = 0; i < 1000; ++i) kInfoKw1.write(100 + i);
    _exit(0);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  kInfoKw1.write(2);
  s->stop();
  EXPECT_EQ(names_in(path), (std::vector<std::string>{"InfoKw1:1", "InfoKw1:2"}));
}

TEST(Session, RecordsTheProcess) {
  const std::string path = spoor::test::temp_trace_path("process");
  std::string error;
  auto s = Session::start({.output_path = path}, &error);
  ASSERT_TRUE(s) << error;
  s->stop();
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  const reader::Process* p = trace->process(static_cast<uint32_t>(getpid()));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->ppid, static_cast<uint32_t>(getppid()));
  EXPECT_FALSE(p->arguments.empty());
  EXPECT_EQ(p->pointer_size, sizeof(void*));
  EXPECT_TRUE(trace->has_clock());
  EXPECT_GT(trace->clock().freq_millihz, 0u);
}

}  // namespace
