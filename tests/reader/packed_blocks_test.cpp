// spoor::compress: packing a run of blocks and expanding it restores every
// byte, in the reference-columns layout, format 1.1's record-columns layout
// and the plain one, and expanding refuses payloads that do not add up.
#include "spoor/compress/packed_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "sample_trace.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

// The blocks of `t`, without its file header.
Bytes blocks_of(const TraceBuilder& t) { return Bytes(t.bytes().begin() + sizeof(fmt::FileHeader), t.bytes().end()); }

fmt::CompressedBlock header_of(const Bytes& payload) {
  fmt::CompressedBlock h{};
  std::memcpy(&h, payload.data(), sizeof h);
  return h;
}

Bytes round_trip(const Bytes& blocks, uint16_t expected_layout,
                 uint16_t layout = fmt::kLayoutReferenceColumns) {
  compress::Packer packer(3, layout);
  Bytes payload;
  compress::ExpandedBytes back;
  std::string problem;
  EXPECT_TRUE(packer.pack(blocks, payload, &problem)) << problem;
  EXPECT_EQ(header_of(payload).layout, expected_layout);
  EXPECT_EQ(header_of(payload).raw_size, blocks.size());
  EXPECT_TRUE(compress::unpack(payload, back, problem)) << problem;
  return Bytes(back.begin(), back.end());
}

TEST(PackedBlocks, RandomRecordsRoundTripThroughTheColumns) {
  std::mt19937 rng(7);
  TraceBuilder t;
  add_sample_metadata(t);
  for (uint64_t p = 0; p < 20; ++p) {
    PacketBuilder packet(1 + p % 2, p % 2, p / 2);
    const int records = static_cast<int>(rng() % 50);
    uint64_t ticks = rng();
    for (int r = 0; r < records; ++r) {
      // Any key word, any body: the layout needs no descriptor. Times may
      // go backwards and wrap at 48 bits.
      ticks += rng() % 2 ? rng() % 1000 : (1ull << 48) - rng() % 500;
      RecordBuilder rec(static_cast<uint16_t>(1 + rng() % 4), ticks);
      if (rng() % 4 == 0) rec.tid(rng());
      if (rng() % 6 == 0) rec.activity(guid_from_seed(static_cast<uint8_t>(rng())));
      const int words = static_cast<int>(rng() % 4);
      for (int w = 0; w < words; ++w) rec.u64(static_cast<uint64_t>(rng()) << (rng() % 32));
      if (rng() % 3 == 0) rec.string(std::string(rng() % 40, 'x'));
      packet.add(rec);
    }
    t.packet(packet);
  }
  t.stream_end(1, 0, 0, 10);
  const Bytes blocks = blocks_of(t);
  EXPECT_EQ(round_trip(blocks, fmt::kLayoutReferenceColumns), blocks);
  EXPECT_EQ(round_trip(blocks, fmt::kLayoutRecordColumns, fmt::kLayoutRecordColumns), blocks);
}

TEST(PackedBlocks, RecordsThatDoNotWalkKeepTheBlocksAsTheyAre) {
  TraceBuilder t;
  add_sample_metadata(t);
  t.packet(PacketBuilder(1, 0, 0).add(hello(1000, 1, "fine").tid(1)));
  t.packet(PacketBuilder(1, 0, 1).add(hello(2000, 2, "odd").tid(1).size_override(13)));
  const Bytes blocks = blocks_of(t);
  EXPECT_EQ(round_trip(blocks, fmt::kLayoutBlocks), blocks);
  EXPECT_EQ(round_trip(blocks, fmt::kLayoutBlocks, fmt::kLayoutRecordColumns), blocks);
}

class ExpandingRefuses : public ::testing::TestWithParam<uint16_t> {};

TEST_P(ExpandingRefuses, WhatDoesNotAddUp) {
  const Bytes blocks = blocks_of(sample_trace());
  compress::Packer packer(compress::kDefaultLevel, GetParam());
  Bytes payload;
  compress::ExpandedBytes back;
  std::string problem;
  ASSERT_TRUE(packer.pack(blocks, payload, &problem)) << problem;
  ASSERT_EQ(header_of(payload).layout, GetParam());

  auto expand_with = [&](auto change) {
    Bytes p = payload;
    change(p);
    problem.clear();
    EXPECT_FALSE(compress::unpack(p, back, problem));
    return problem;
  };
  auto set_field = [](Bytes& p, size_t offset, uint32_t value, size_t width) {
    std::memcpy(p.data() + offset, &value, width);
  };
  EXPECT_EQ(expand_with([&](Bytes& p) { set_field(p, 0, 9, 2); }),
            "it uses codec 9, which this reader does not know");
  EXPECT_EQ(expand_with([&](Bytes& p) { set_field(p, 2, 7, 2); }),
            "it uses layout 7, which this reader does not know");
  EXPECT_NE(expand_with([&](Bytes& p) { p.resize(p.size() - 3); }).find("zstd cannot expand it"),
            std::string::npos)
      << problem;
  // One record more than the packets take.
  const uint32_t records = header_of(payload).record_count;
  EXPECT_NE(expand_with([&](Bytes& p) { set_field(p, offsetof(fmt::CompressedBlock, record_count), records - 1, 4); })
                .find("its record columns do not add up"),
            std::string::npos)
      << problem;
  // Layout 1 finds out when a block would not fit; layout 2 before it
  // starts (the sizes of its records bound what its model allocates).
  const std::string too_small = GetParam() == fmt::kLayoutRecordColumns
                                    ? "it expands to more than the 100 bytes of blocks its header declares"
                                    : "its 8 records take 190 bytes, more than the 100 it expands to";
  EXPECT_NE(expand_with([&](Bytes& p) { set_field(p, offsetof(fmt::CompressedBlock, raw_size), 100, 4); })
                .find(too_small),
            std::string::npos)
      << problem;
  // A declared size larger than the blocks come to.
  const uint32_t raw = header_of(payload).raw_size;
  EXPECT_NE(expand_with([&](Bytes& p) { set_field(p, offsetof(fmt::CompressedBlock, raw_size), raw + 16, 4); })
                .find("bytes of blocks, not the " + std::to_string(raw + 16) + " its header declares"),
            std::string::npos)
      << problem;
  EXPECT_EQ(expand_with([&](Bytes& p) { p.resize(10); }),
            "its payload of 10 bytes is too short for the 24-byte compression header");
}

INSTANTIATE_TEST_SUITE_P(Layouts, ExpandingRefuses,
                         ::testing::Values(fmt::kLayoutRecordColumns, fmt::kLayoutReferenceColumns,
                                           fmt::kLayoutStepTimes));

}  // namespace
}  // namespace spoor::testing
