// Per-CPU rings: wraparound, exact drop accounting, thread ids, flushing,
// and a multi-thread stress with a concurrent drainer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <sched.h>
#include <unistd.h>

#include "ring_test_util.h"
#include "spoor/event.h"

namespace {

using spoor::test::DrainResult;
using spoor::test::TestRing;

SPOOR_DEFINE_PROVIDER(g_ring_test, "Spoor.Test.Ring");

SPOOR_EVENT(kSeq, g_ring_test, (spoor::EventInfo{.name = "Seq", .id = 1}),
            spoor::Field<uint32_t>{"thread"}, spoor::Field<uint64_t>{"seq"},
            spoor::Field<spoor::Str>{"text"});
SPOOR_EVENT(kBig, g_ring_test, (spoor::EventInfo{.name = "Big", .id = 2}),
            spoor::Field<spoor::Blob>{"data"});

const uint32_t kCpus = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF));
const char kText[] = "abcdefghijklm";

// The body a Seq event writes: thread, seq, then a string of seq % 13 chars.
void write_seq(uint32_t thread, uint64_t seq) {
  kSeq.write(thread, seq, spoor::Str(kText, seq % 13));
}

// Checks a Seq record's body byte for byte and returns (thread, seq).
bool parse_seq(const spoor::test::Record& r, uint32_t* thread, uint64_t* seq) {
  if (r.body.size() < 13) return false;
  std::memcpy(thread, r.body.data(), 4);
  std::memcpy(seq, r.body.data() + 4, 8);
  const uint32_t len = *seq % 13;
  if (r.body[12] != len) return false;
  const size_t used = 13 + len;
  // Exactly the string plus at most one padding byte.
  if (r.body.size() != used && r.body.size() != used + 1) return false;
  return std::memcmp(r.body.data() + 13, kText, len) == 0;
}

class RingTest : public ::testing::Test {
 protected:
  void SetUp() override { spoor::test::enable_all(g_ring_test); }
  void TearDown() override {
    spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(g_ring_test.control()), {});
  }
};

TEST_F(RingTest, WrapsAroundManyTimesWithoutLosingOrReordering) {
  TestRing ring(kCpus, 256, 4);
  DrainResult got;
  const uint64_t kEvents = 20000;
  for (uint64_t i = 0; i < kEvents; ++i) {
    write_seq(7, i);
    if (i % 4 == 3) spoor::test::drain(ring.view(), got, /*flush=*/false);
  }
  spoor::test::drain(ring.view(), got, /*flush=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  EXPECT_EQ(spoor::test::total_lost(ring.view()), 0u);
  ASSERT_EQ(got.records.size(), kEvents);
  // Order per CPU stream is write order; merge by sequence.
  std::vector<bool> seen(kEvents);
  std::map<uint32_t, uint64_t> last_seq_on_cpu;
  for (const auto& r : got.records) {
    uint32_t thread;
    uint64_t seq;
    ASSERT_TRUE(parse_seq(r, &thread, &seq));
    EXPECT_EQ(thread, 7u);
    ASSERT_LT(seq, kEvents);
    EXPECT_FALSE(seen[seq]);
    seen[seq] = true;
    auto it = last_seq_on_cpu.find(r.cpu);
    if (it != last_seq_on_cpu.end()) {
      EXPECT_LT(it->second, seq);
    }
    last_seq_on_cpu[r.cpu] = seq;
  }
  // 20000 records of ~36 bytes in 256-byte packets: hundreds of laps of a
  // 4-packet ring.
  EXPECT_GT(got.packets, 100u * 4);
}

// Keeps the calling thread on the CPU it runs on until destroyed: a test
// that reasons about one CPU's ring must not migrate halfway (its later
// events would land, kept, in another CPU's ring).
class PinnedToThisCpu {
 public:
  PinnedToThisCpu() {
    pinned_ = sched_getaffinity(0, sizeof before_, &before_) == 0;
    const int cpu = sched_getcpu();
    if (!pinned_ || cpu < 0) {
      pinned_ = false;
      return;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~PinnedToThisCpu() {
    if (pinned_) sched_setaffinity(0, sizeof before_, &before_);
  }
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t before_;
  bool pinned_ = false;
};

TEST_F(RingTest, DropsAreCountedExactlyWhenNobodyDrains) {
  const PinnedToThisCpu pin;
  ASSERT_TRUE(pin.pinned()) << "the beginning is kept per CPU: the writes must stay on one";
  TestRing ring(kCpus, 256, 2);
  const uint64_t kWritten = 5000;
  for (uint64_t i = 0; i < kWritten; ++i) write_seq(1, i);
  DrainResult got;
  spoor::test::drain(ring.view(), got, /*flush=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  const uint64_t lost = spoor::test::total_lost(ring.view());
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(got.records.size() + lost, kWritten);
  // What survived is the beginning: the ring drops new events, never old ones.
  for (const auto& r : got.records) {
    uint32_t thread;
    uint64_t seq;
    ASSERT_TRUE(parse_seq(r, &thread, &seq));
    EXPECT_LT(seq, got.records.size() + kCpus * 2);
  }
}

TEST_F(RingTest, EventLargerThanAPacketIsDroppedAndCounted) {
  TestRing ring(kCpus, 256, 4);
  std::vector<uint8_t> big(1000, 0xAB);
  kBig.write(spoor::Blob{big.data(), static_cast<uint32_t>(big.size())});
  std::vector<uint8_t> small(100, 0xCD);
  kBig.write(spoor::Blob{small.data(), static_cast<uint32_t>(small.size())});
  DrainResult got;
  spoor::test::drain(ring.view(), got, true);
  ASSERT_TRUE(got.ok) << got.problem;
  EXPECT_EQ(spoor::test::total_lost(ring.view()), 1u);
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_EQ(got.records[0].body[0], 100);  // ULEB128 length of the small blob
}

TEST_F(RingTest, FlushClosesAPartlyFilledPacket) {
  TestRing ring(kCpus, 4096, 4);
  write_seq(3, 0);
  DrainResult got;
  spoor::test::drain(ring.view(), got, /*flush=*/false);
  EXPECT_EQ(got.records.size(), 0u) << "an open packet is not drained without a flush";
  spoor::test::drain(ring.view(), got, /*flush=*/true);
  ASSERT_EQ(got.records.size(), 1u);
  // The next event opens a new packet and carries the tid again.
  write_seq(3, 1);
  spoor::test::drain(ring.view(), got, true);
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_TRUE(got.records[1].carried_tid);
  EXPECT_EQ(got.records[1].tid, static_cast<uint32_t>(gettid()));
}

// The writer that opens a packet of its CPU's ring on the first lap hands
// it to RingView::first_use (the preloaded library maps its pages then),
// once per packet, whole; later laps never do.
std::vector<std::pair<uint8_t*, uint32_t>> g_first_uses;
void note_first_use(uint8_t* packet, uint32_t bytes) { g_first_uses.emplace_back(packet, bytes); }

TEST_F(RingTest, EachPacketIsHandedToFirstUseOnceOnItsFirstLap) {
  const PinnedToThisCpu pin;
  ASSERT_TRUE(pin.pinned()) << "one CPU's ring: the writes must stay on one";
  const uint32_t cpu = static_cast<uint32_t>(sched_getcpu());
  TestRing ring(kCpus, 256, 4);
  spoor::RingView view = ring.view();
  view.first_use = note_first_use;
  spoor::ring_install(view);
  g_first_uses.clear();
  DrainResult got;
  for (uint64_t i = 0; i < 2000; ++i) {
    write_seq(7, i);
    if (i % 4 == 3) spoor::test::drain(view, got, /*flush=*/false);
  }
  spoor::test::drain(view, got, /*flush=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 2000u);
  EXPECT_GT(got.packets, 10u * 4) << "many laps";
  ASSERT_EQ(g_first_uses.size(), 4u) << "each of the 4 packets, on the first lap only";
  uint8_t* const ring_data = view.data + (uint64_t{cpu} << view.ring_shift);
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(g_first_uses[k].first, ring_data + k * 256) << "packet " << k;
    EXPECT_EQ(g_first_uses[k].second, 256u);
  }
}

// While the drainer keeps up, a writer 4 MiB into a ring of 16 MiB or more
// goes back to its start (ring.cpp's
// rewind_target): the writes stay in its first packets, and the drainer
// follows over the skipped rest of each lap without losing or reordering a
// record.
void write_numbered_blob(uint64_t seq) {
  uint8_t data[2000] = {};
  std::memcpy(data, &seq, sizeof seq);
  kBig.write(spoor::Blob{data, sizeof data});
}
uint64_t blob_number(const spoor::test::Record& r) {
  uint64_t seq = ~uint64_t{0};
  if (r.body.size() >= 2 + 8) std::memcpy(&seq, r.body.data() + 2, 8);  // after the ULEB128 length
  return seq;
}

// 16 MiB per CPU (the smallest ring that goes back) and 32 MiB (spoor
// record's): both go back at 4 MiB.
class RingGoingBack : public RingTest, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(RingGoingBack, WritersGoBackToTheRingsStartWhileTheDrainerKeepsUp) {
  const PinnedToThisCpu pin;
  ASSERT_TRUE(pin.pinned()) << "one CPU's ring: the writes must stay on one";
  const uint32_t cpu = static_cast<uint32_t>(sched_getcpu());
  constexpr uint32_t kPacket = 1u << 20;
  TestRing ring(kCpus, kPacket, GetParam());
  spoor::RingView view = ring.view();
  view.first_use = note_first_use;
  spoor::ring_install(view);
  g_first_uses.clear();
  DrainResult got;
  const uint64_t kEvents = 12000;  // ~24 MB: six times the first 4 MiB
  for (uint64_t i = 0; i < kEvents; ++i) {
    write_numbered_blob(i);
    if (i % 4 == 3) spoor::test::drain(view, got, /*flush=*/false);
  }
  spoor::test::drain(view, got, /*flush=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  EXPECT_EQ(spoor::test::total_lost(view), 0u);
  ASSERT_EQ(got.records.size(), kEvents);
  for (uint64_t i = 0; i < kEvents; ++i) ASSERT_EQ(blob_number(got.records[i]), i) << "in write order";
  EXPECT_GT(got.packets, 16u);
  ASSERT_EQ(g_first_uses.size(), 4u) << "the first 4 MiB's packets, and no other";
  uint8_t* const ring_data = view.data + (uint64_t{cpu} << view.ring_shift);
  for (uint32_t k = 0; k < 4; ++k) EXPECT_EQ(g_first_uses[k].first, ring_data + uint64_t{k} * kPacket) << "packet " << k;
  EXPECT_EQ(view.cpus[cpu].furthest, uint64_t{4} * kPacket);
}

INSTANTIATE_TEST_SUITE_P(PacketsOf1MiB, RingGoingBack, ::testing::Values(16u, 32u));

// A writer killed after its reservation took the ring back to its start
// but before it marked the rest of the lap skipped (and before it wrote
// its record): the drainer waits at the unmarked packet while the process
// lives; its last drain walks over the never-written rest of the lap
// (nothing in it counts as abandoned), loses the new lap's first packet
// behind the dead record (abandoned: its sizes are unknown), and delivers
// every packet after it.
TEST_F(RingTest, AWriterKilledWhileGoingBackLosesOnlyThePacketBehindItsRecord) {
  const PinnedToThisCpu pin;
  ASSERT_TRUE(pin.pinned()) << "one CPU's ring: the writes must stay on one";
  const uint32_t cpu = static_cast<uint32_t>(sched_getcpu());
  constexpr uint32_t kPacket = 1u << 20;
  TestRing ring(kCpus, kPacket, 16);
  spoor::RingView view = ring.view();
  spoor::ring_install(view);
  const uint32_t packets = 16;
  uint32_t* const ends = view.packet_end + size_t{cpu} * packets;
  uint8_t* const lap_start = view.data + (uint64_t{cpu} << view.ring_shift);
  DrainResult got;
  // Write (draining behind) until a write goes back to the ring's start.
  uint64_t next = 0;
  int skipped = -1;
  while (skipped < 0 && next < 20000) {
    write_numbered_blob(next++);
    for (uint32_t k = 0; k < packets; ++k)
      if (__atomic_load_n(&ends[k], __ATOMIC_ACQUIRE) == spoor::kSkipToNextLap) skipped = static_cast<int>(k);
    if (skipped < 0 && next % 4 == 0) spoor::test::drain(view, got, /*flush=*/false);
  }
  ASSERT_GE(skipped, 4) << "the writes went back 4 MiB into the ring";
  // That write dies before its marker and its record: undo both.
  const uint64_t killed = next - 1;
  __atomic_store_n(&ends[skipped], 0u, __ATOMIC_RELEASE);
  uint16_t dead_size = 0;
  std::memcpy(&dead_size, lap_start, 2);
  ASSERT_GT(dead_size, 2000u);
  std::memset(lap_start, 0, dead_size);
  // The other writers go on: three more packets.
  const uint64_t after = killed + 1;
  while (next < after + 1500) write_numbered_blob(next++);
  const size_t before_kill = got.records.size();
  spoor::test::drain(view, got, /*flush=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  // Everything before the killed write arrived; nothing past the unmarked
  // packet while the process lives.
  for (size_t i = 0; i < got.records.size(); ++i) ASSERT_EQ(blob_number(got.records[i]), i);
  EXPECT_EQ(got.records.size(), killed);
  EXPECT_GE(got.records.size(), before_kill);
  // The last drain.
  spoor::test::drain(view, got, /*flush=*/true, /*final=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  EXPECT_EQ(spoor::test::total_lost(view), 0u);
  ASSERT_GT(got.records.size(), killed) << "the packets after the new lap's first";
  const uint64_t first_after = blob_number(got.records[killed]);
  EXPECT_GT(first_after, after) << "the first packet's records behind the dead one are lost";
  for (size_t i = killed; i < got.records.size(); ++i)
    ASSERT_EQ(blob_number(got.records[i]), first_after + (i - killed)) << "in write order";
  EXPECT_EQ(blob_number(got.records.back()), next - 1);
  // Abandoned: the new lap's first packet (what followed the dead record),
  // not the 11 skipped packets of the last lap.
  const uint64_t abandoned = view.cpus[cpu].abandoned_bytes;
  EXPECT_GT(abandoned, 0u);
  EXPECT_LE(abandoned, kPacket);
}

// A ring under 16 MiB would leave the writers too little room after going
// back (a drainer's stall of a few milliseconds): they go round it whole.
TEST_F(RingTest, WritersGoRoundASmallRingWhole) {
  const PinnedToThisCpu pin;
  ASSERT_TRUE(pin.pinned()) << "one CPU's ring: the writes must stay on one";
  const uint32_t cpu = static_cast<uint32_t>(sched_getcpu());
  TestRing ring(kCpus, 256, 32);
  DrainResult got;
  for (uint64_t i = 0; i < 2000; ++i) {
    write_seq(7, i);
    if (i % 4 == 3) spoor::test::drain(ring.view(), got, /*flush=*/false);
  }
  spoor::test::drain(ring.view(), got, /*flush=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 2000u);
  EXPECT_EQ(ring.view().cpus[cpu].furthest, uint64_t{32} * 256);
}

// With nobody draining, the writers never go back: the whole ring holds
// events before any is dropped.
TEST_F(RingTest, ARingNobodyDrainsIsFilledWholeBeforeDropping) {
  const PinnedToThisCpu pin;
  ASSERT_TRUE(pin.pinned()) << "one CPU's ring: the writes must stay on one";
  const uint32_t cpu = static_cast<uint32_t>(sched_getcpu());
  TestRing ring(kCpus, 256, 32);
  uint64_t written = 0;
  while (spoor::test::total_lost(ring.view()) == 0) write_seq(7, written++);
  DrainResult got;
  spoor::test::drain(ring.view(), got, /*flush=*/true);
  ASSERT_TRUE(got.ok) << got.problem;
  EXPECT_EQ(got.packets, 32u) << "every packet of the ring";
  EXPECT_EQ(got.records.size() + 1, written) << "only the last event was dropped";
  EXPECT_EQ(ring.view().cpus[cpu].furthest, uint64_t{32} * 256);
}

TEST_F(RingTest, TidIsWrittenOnlyWhenTheThreadChanges) {
  TestRing ring(1, 4096, 4);  // one ring: every thread shares it
  write_seq(0, 0);
  write_seq(0, 1);
  std::thread([] { write_seq(1, 2); }).join();
  write_seq(0, 3);
  DrainResult got;
  spoor::test::drain(ring.view(), got, true);
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 4u);
  EXPECT_TRUE(got.records[0].carried_tid);
  EXPECT_FALSE(got.records[1].carried_tid);
  EXPECT_TRUE(got.records[2].carried_tid);
  EXPECT_NE(got.records[2].tid, got.records[0].tid);
  EXPECT_TRUE(got.records[3].carried_tid);
  EXPECT_EQ(got.records[3].tid, got.records[0].tid);
}

TEST_F(RingTest, TimestampsIncreaseWithinACpuStream) {
  TestRing ring(1, 1024, 32);  // 32 KiB: room for all 500 (~36 bytes each)
  for (uint64_t i = 0; i < 500; ++i) write_seq(0, i);
  DrainResult got;
  spoor::test::drain(ring.view(), got, true);
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 500u);
  for (size_t i = 1; i < got.records.size(); ++i)
    EXPECT_LE(got.records[i - 1].ticks, got.records[i].ticks);
}

// A view's tick_mask rounds every record's time down (spoor record
// --time-resolution): on the fast path and the slow one (a packet's first
// record, a thread change), as installed.
TEST_F(RingTest, TimesAreRoundedDownToTheViewsTickMask) {
  TestRing ring(1, 256, 64);  // small packets: many records open one
  spoor::RingView view = ring.view();
  view.tick_mask = ~uint64_t{63};
  spoor::ring_install(view);
  for (uint64_t i = 0; i < 400; ++i) write_seq(0, i);
  std::thread([] { write_seq(1, 400); }).join();
  DrainResult got;
  spoor::test::drain(view, got, true);
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 401u);
  EXPECT_GT(got.packets, 10u);
  for (const auto& r : got.records) EXPECT_EQ(r.ticks % 64, 0u) << r.ticks;
  spoor::ring_install(ring.view());
  bool fine_before = false;  // a record with a time below the grain, unmasked
  for (uint64_t i = 0; i < 64 && !fine_before; ++i) {
    write_seq(0, i);
    DrainResult plain;
    spoor::test::drain(ring.view(), plain, true);
    fine_before = !plain.records.empty() && plain.records.back().ticks % 64 != 0;
  }
  EXPECT_TRUE(fine_before) << "the default view keeps every tick";
}

TEST_F(RingTest, NoRingInstalledWritesNothing) {
  ring_install(spoor::RingView{});
  write_seq(0, 0);  // must not crash
  SUCCEED();
}

void pause_for(uint32_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// What a concurrent run wrote: `threads` threads, each calling write(t, i)
// for i < per_thread, pausing pause_ns after each.
struct Writers {
  uint32_t threads;
  uint64_t per_thread;
  uint32_t pause_ns;
  void (*write)(uint32_t thread, uint64_t seq);
  bool (*read)(const spoor::test::Record& r, uint32_t* thread, uint64_t* seq);
};

// Runs the writers with a drainer running alongside, drains what is left,
// and checks the run: no corrupt record, received + lost == written, no
// record twice, one tid per thread, each thread's records in order per CPU.
void run_beside_a_drainer(const spoor::RingView& view, const Writers& w) {
  std::atomic<bool> done{false};
  DrainResult got;
  std::thread drainer([&] {
    while (!done.load()) spoor::test::drain(view, got, false);
  });
  std::vector<std::thread> writers;
  for (uint32_t t = 0; t < w.threads; ++t)
    writers.emplace_back([t, &w] {
      for (uint64_t i = 0; i < w.per_thread; ++i) {
        w.write(t, i);
        if (w.pause_ns != 0) pause_for(w.pause_ns);
      }
    });
  for (auto& thread : writers) thread.join();
  done.store(true);
  drainer.join();
  spoor::test::drain(view, got, true);
  ASSERT_TRUE(got.ok) << got.problem;
  const uint64_t lost = spoor::test::total_lost(view);
  EXPECT_EQ(got.records.size() + lost, w.threads * w.per_thread);
  uint64_t furthest = 0;  // under the ring's bytes: the writers went back to its start
  for (uint32_t cpu = 0; cpu < view.cpu_count; ++cpu) furthest = std::max(furthest, view.cpus[cpu].furthest);
  ::testing::Test::RecordProperty("received", std::to_string(got.records.size()));
  ::testing::Test::RecordProperty("lost", std::to_string(lost));
  ::testing::Test::RecordProperty("furthest", std::to_string(furthest));
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> last;
  std::vector<std::vector<bool>> seen(w.threads, std::vector<bool>(w.per_thread));
  std::map<uint32_t, uint32_t> tid_of_thread;
  for (const auto& r : got.records) {
    uint32_t thread;
    uint64_t seq;
    ASSERT_TRUE(w.read(r, &thread, &seq));
    ASSERT_LT(thread, w.threads);
    ASSERT_LT(seq, w.per_thread);
    ASSERT_FALSE(seen[thread][seq]) << "duplicate record";
    seen[thread][seq] = true;
    auto [it, inserted] = tid_of_thread.emplace(thread, r.tid);
    EXPECT_EQ(it->second, r.tid) << "records of one thread carry one tid";
    const auto key = std::make_pair(thread, r.cpu);
    const auto l = last.find(key);
    if (l != last.end()) {
      EXPECT_LT(l->second, seq);
    }
    last[key] = seq;
  }
}

// Six threads flat out outrun the drainer (most events are dropped: the
// full-ring path); two that pause a few microseconds after each event
// mostly let it keep up.
class RingStress : public RingTest, public ::testing::WithParamInterface<Writers> {};

TEST_P(RingStress, ThreadsWithConcurrentDrainer) {
  TestRing ring(kCpus, 16384, 8);
  run_beside_a_drainer(ring.view(), GetParam());
}

void write_seq_of(uint32_t thread, uint64_t seq) { write_seq(thread, seq); }

INSTANTIATE_TEST_SUITE_P(Rings, RingStress,
                         ::testing::Values(Writers{6, 500000, 0, write_seq_of, parse_seq},
                                           Writers{2, 100000, 3000, write_seq_of, parse_seq}));

// Two threads writing 2000-byte events into 16 MiB rings with a drainer
// close behind: the writers go back to the start of the ring again and
// again (furthest 5-8 MiB of 16 in three runs on an idle machine) while
// the drainer walks over the skipped laps.
void write_numbered_blob_of(uint32_t thread, uint64_t seq) { write_numbered_blob((uint64_t{thread} << 32) | seq); }
bool read_numbered_blob(const spoor::test::Record& r, uint32_t* thread, uint64_t* seq) {
  const uint64_t n = blob_number(r);
  *thread = static_cast<uint32_t>(n >> 32);
  *seq = n & 0xFFFFFFFFu;
  return n != ~uint64_t{0};
}

TEST_F(RingTest, ConcurrentWritersGoingBackToTheStartLoseNothingUncounted) {
  TestRing ring(kCpus, 1u << 20, 16);
  run_beside_a_drainer(ring.view(), Writers{2, 10000, 20000, write_numbered_blob_of, read_numbered_blob});
}

}  // namespace
