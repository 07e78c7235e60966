// Holding a CPU's perf records back and giving them out in time order.
#include "spoor/kernelsrc/time_order.h"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "perf_record_builder.h"

namespace spoor::kernelsrc {
namespace {

// A SWITCH record whose body tells it apart: the trailer's pid is `tag`.
std::vector<uint8_t> tagged(uint32_t tag, uint64_t time) {
  RecordBuilder b(PERF_RECORD_SWITCH);
  b.trailer(tag, tag, time, 0, 3);
  b.done();
  return b.bytes;
}

uint32_t tag_of(std::span<const uint8_t> record) {
  uint32_t tag = 0;
  std::memcpy(&tag, record.data() + sizeof(perf_event_header), 4);
  return tag;
}

// Releases up to `up_to`; the tags given, in order, each record checked
// whole (size and bytes) against what was held.
std::vector<uint32_t> release(TimeOrder& order, uint64_t up_to, const std::vector<std::vector<uint8_t>>& held) {
  std::vector<uint32_t> tags;
  order.release(up_to, [&](std::span<const uint8_t> r) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data()) % 8, 0u) << "records stay 8-byte aligned";
    const uint32_t tag = tag_of(r);
    tags.push_back(tag);
    EXPECT_TRUE(std::vector<uint8_t>(r.begin(), r.end()) == held[tag]) << "record " << tag << " is what was held";
  });
  return tags;
}

// The ring's order, nearly by time: record 2 (stamped 100) was written
// after records stamped 120 and 130, as when an interrupt wrote its record
// between the kernel reading a record's time and reserving its room.
TEST(TimeOrder, RecordsComeOutByTimeAndOnlyUpToTheBound) {
  const std::vector<std::vector<uint8_t>> records = {tagged(0, 90), tagged(1, 120), tagged(2, 100), tagged(3, 130),
                                                     tagged(4, 200), tagged(5, 150)};
  TimeOrder order;
  for (const auto& r : records) {
    uint64_t time = 0;
    ASSERT_TRUE(record_time(r, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER, &time));
    order.hold(r, time);
  }
  EXPECT_EQ(order.held(), 6u);
  EXPECT_EQ(release(order, 130, records), (std::vector<uint32_t>{0, 2, 1, 3})) << "sorted, the bound included";
  EXPECT_EQ(order.held(), 2u);
  EXPECT_TRUE(release(order, 140, records).empty()) << "nothing stamped up to 140 is left";
  // A late record, earlier than what is still held: it goes first.
  const std::vector<std::vector<uint8_t>> late = {tagged(0, 145)};
  order.hold(late[0], 145);
  std::vector<uint32_t> tags;
  order.release(1000, [&](std::span<const uint8_t> r) { tags.push_back(tag_of(r) == 0 ? 6 : tag_of(r)); });
  EXPECT_EQ(tags, (std::vector<uint32_t>{6, 5, 4}));
  EXPECT_EQ(order.held(), 0u);
}

TEST(TimeOrder, RecordsOfOneTimeKeepTheRingsOrder) {
  std::vector<std::vector<uint8_t>> records;
  TimeOrder order;
  for (uint32_t i = 0; i < 50; ++i) {
    records.push_back(tagged(i, 1000 + (i % 5)));
    order.hold(records.back(), 1000 + (i % 5));
  }
  std::vector<uint32_t> expected;
  for (uint32_t t = 0; t < 5; ++t)
    for (uint32_t i = t; i < 50; i += 5) expected.push_back(i);
  EXPECT_EQ(release(order, 2000, records), expected);
}

// What is kept across releases is moved, not lost or duplicated, however
// many rounds it waits.
TEST(TimeOrder, HeldRecordsSurviveManyReleasesWhole) {
  std::vector<std::vector<uint8_t>> records;
  TimeOrder order;
  std::vector<uint32_t> out;
  for (uint32_t round = 0; round < 20; ++round) {
    for (uint32_t i = 0; i < 10; ++i) {
      const uint32_t tag = round * 10 + i;
      records.push_back(tagged(tag, uint64_t{tag} * 7 % 23 + round * 10));
      order.hold(records.back(), uint64_t{tag} * 7 % 23 + round * 10);
    }
    const auto got = release(order, round * 10, records);
    out.insert(out.end(), got.begin(), got.end());
  }
  const auto rest = release(order, ~uint64_t{0}, records);
  out.insert(out.end(), rest.begin(), rest.end());
  ASSERT_EQ(out.size(), 200u);
  uint64_t last = 0;
  for (uint32_t tag : out) {
    const uint64_t time = uint64_t{tag} * 7 % 23 + tag / 10 * 10;
    EXPECT_GE(time, last) << "tag " << tag;
    last = time;
  }
  std::vector<uint32_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < 200; ++i) EXPECT_EQ(sorted[i], i);
}

// Records of the largest sizes fill chunks: each comes back whole across
// chunk boundaries, and a ring drained and released steadily reuses its
// chunks instead of taking new ones.
TEST(TimeOrder, LargeRecordsFillChunksThatAreReused) {
  TimeOrder order;
  std::vector<std::vector<uint8_t>> records;
  uint64_t released = 0;
  for (uint32_t round = 0; round < 200; ++round) {
    for (uint32_t i = 0; i < 7; ++i) {
      const uint32_t tag = round * 7 + i;
      RecordBuilder b(PERF_RECORD_SAMPLE);
      b.u32x2(tag, 0);
      const size_t body = 40000 + (tag % 5) * 5000;  // 40-60 KB, as CPU samples with stack copies
      for (size_t k = 0; k < body; k += 8) b.u64(uint64_t{tag} << 32 | k);
      b.done();
      records.push_back(std::move(b.bytes));
      order.hold(records.back(), tag);
    }
    // Everything but the newest few, as each drain releases all but the
    // last few ms.
    order.release(round * 7 > 10 ? round * 7 - 10 : 0, [&](std::span<const uint8_t> r) {
      const uint32_t tag = tag_of(r);
      EXPECT_EQ(tag, released) << "in order, none skipped";
      EXPECT_TRUE(std::vector<uint8_t>(r.begin(), r.end()) == records[tag]) << "record " << tag << " whole";
      ++released;
    });
  }
  order.release(~uint64_t{0}, [&](std::span<const uint8_t> r) { EXPECT_EQ(tag_of(r), released++); });
  EXPECT_EQ(released, 1400u);
  EXPECT_EQ(order.held(), 0u);
  // ~17 records held at once, 16-26 per chunk: a few chunks, not the 66 MB
  // of all the records.
  EXPECT_LE(order.chunks(), 4u);
}

// A record stamped late (it waits) keeps its chunk; the chunks written
// after it are reused once their records are gone, also the one being
// written when it fills.
TEST(TimeOrder, ALateRecordHoldsOnlyItsOwnChunk) {
  TimeOrder order;
  const std::vector<uint8_t> late = tagged(9999, 1'000'000);
  order.hold(late, 1'000'000);
  RecordBuilder big(PERF_RECORD_SAMPLE);
  big.u32x2(1, 0);
  for (size_t k = 0; k < 60000; k += 8) big.u64(k);
  big.done();
  uint64_t time = 0, released = 0;
  for (int cycle = 0; cycle < 10; ++cycle) {
    // A chunk's worth each time: the chunk written is full, and none of it
    // held, when the next cycle begins.
    for (size_t i = 0; i < TimeOrder::kChunkBytes / big.bytes.size(); ++i) order.hold(big.bytes, ++time);
    order.release(999'999, [&](std::span<const uint8_t> r) {
      EXPECT_EQ(tag_of(r), 1u);
      ++released;
    });
    EXPECT_EQ(order.held(), 1u) << "the late record waits";
  }
  EXPECT_EQ(released, 10 * (TimeOrder::kChunkBytes / big.bytes.size()));
  EXPECT_EQ(order.chunks(), 2u) << "the late record's chunk, and one the others take in turn";
  order.release(~uint64_t{0}, [&](std::span<const uint8_t> r) { EXPECT_EQ(tag_of(r), 9999u); });
  EXPECT_EQ(order.held(), 0u);
}

}  // namespace
}  // namespace spoor::kernelsrc
