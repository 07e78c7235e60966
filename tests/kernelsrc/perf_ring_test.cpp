// The ring reader on synthetic perf buffers: records laid out the way the
// kernel does, wrapped around the end, corrupt headers.
#include "spoor/kernelsrc/perf_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace spoor::kernelsrc {
namespace {

// A header page and a small data area, and a writer playing the kernel.
struct FakeRing {
  explicit FakeRing(size_t size) : data(size, 0xEE) { header.data_head = header.data_tail = 0; }

  // Writes a record of `size` bytes (header included) whose payload bytes
  // are all `fill`, at the head, wrapping as the kernel does.
  void write(uint32_t type, uint16_t size, uint8_t fill) {
    std::vector<uint8_t> r(size, fill);
    perf_event_header h{type, 0, size};
    std::memcpy(r.data(), &h, sizeof h);
    for (size_t i = 0; i < size; ++i) data[(head + i) % data.size()] = r[i];
    head += size;
    header.data_head = head;
  }

  perf_event_mmap_page header{};
  std::vector<uint8_t> data;
  uint64_t head = 0;
};

struct Seen {
  uint32_t type;
  size_t size;
  bool payload_intact;
};

std::vector<Seen> drain(PerfRing& ring) {
  std::vector<Seen> seen;
  ring.drain([&](std::span<const uint8_t> r) {
    const auto& h = *reinterpret_cast<const perf_event_header*>(r.data());
    bool intact = r.size() == h.size;
    for (size_t i = sizeof h; i < r.size(); ++i) intact &= r[i] == static_cast<uint8_t>(h.type);
    seen.push_back({h.type, r.size(), intact});
  });
  return seen;
}

TEST(PerfRing, ReadsRecordsInOrderAndGivesTheSpaceBack) {
  FakeRing f(256);
  PerfRing ring(&f.header, f.data.data(), f.data.size());
  f.write(PERF_RECORD_SAMPLE, 40, PERF_RECORD_SAMPLE);
  f.write(PERF_RECORD_MMAP2, 64, PERF_RECORD_MMAP2);
  const auto seen = drain(ring);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].type, PERF_RECORD_SAMPLE);
  EXPECT_EQ(seen[1].type, PERF_RECORD_MMAP2);
  EXPECT_TRUE(seen[0].payload_intact && seen[1].payload_intact);
  EXPECT_EQ(f.header.data_tail, 104u) << "the tail is released up to the head";
  EXPECT_EQ(ring.pending(), 0u);
  EXPECT_TRUE(drain(ring).empty());
}

TEST(PerfRing, ARecordThatWrapsPastTheEndArrivesWhole) {
  FakeRing f(128);
  PerfRing ring(&f.header, f.data.data(), f.data.size());
  f.write(PERF_RECORD_COMM, 96, PERF_RECORD_COMM);
  ASSERT_EQ(drain(ring).size(), 1u);
  f.write(PERF_RECORD_SAMPLE, 72, PERF_RECORD_SAMPLE);  // 96..168: wraps at 128
  const auto seen = drain(ring);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].size, 72u);
  EXPECT_TRUE(seen[0].payload_intact) << "copied out to scratch in order";
  EXPECT_EQ(f.header.data_tail, 168u);
}

TEST(PerfRing, AHeaderThatWrapsIsReadToo) {
  FakeRing f(64);
  PerfRing ring(&f.header, f.data.data(), f.data.size());
  f.write(PERF_RECORD_LOST, 56, PERF_RECORD_LOST);
  drain(ring);
  f.write(PERF_RECORD_SWITCH, 24, PERF_RECORD_SWITCH);  // header at 56..64, body from 0
  const auto seen = drain(ring);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, PERF_RECORD_SWITCH);
  EXPECT_TRUE(seen[0].payload_intact);
}

TEST(PerfRing, AHeadInsideARecordCannotBeWalked) {
  FakeRing f(256);
  PerfRing ring(&f.header, f.data.data(), f.data.size());
  f.write(PERF_RECORD_SAMPLE, 40, PERF_RECORD_SAMPLE);
  f.header.data_head = 16;  // the kernel publishes whole records: this is damage
  EXPECT_EQ(drain(ring).size(), 0u);
  EXPECT_EQ(ring.corrupt(), 1u) << "a size beyond the published head cannot be walked";
}

TEST(PerfRing, CorruptSizesAreCountedAndSkippedNotFollowed) {
  for (uint16_t bad : {uint16_t{0}, uint16_t{4}, uint16_t{20}, uint16_t{4096}}) {
    FakeRing f(256);
    PerfRing ring(&f.header, f.data.data(), f.data.size());
    f.write(PERF_RECORD_SAMPLE, 24, PERF_RECORD_SAMPLE);
    f.write(PERF_RECORD_SAMPLE, 32, PERF_RECORD_SAMPLE);
    perf_event_header h{PERF_RECORD_SAMPLE, 0, bad};
    std::memcpy(f.data.data() + 24, &h, sizeof h);  // the second record's size is now wrong
    const auto seen = drain(ring);
    EXPECT_EQ(seen.size(), 1u) << "size " << bad;
    EXPECT_EQ(ring.corrupt(), 1u);
    EXPECT_EQ(f.header.data_tail, f.head) << "everything published is given back";
    f.write(PERF_RECORD_COMM, 16, PERF_RECORD_COMM);
    EXPECT_EQ(drain(ring).size(), 1u) << "and the ring goes on";
  }
}

}  // namespace
}  // namespace spoor::kernelsrc
