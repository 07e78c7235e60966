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

}  // namespace
}  // namespace spoor::kernelsrc
