// The recorder's side of a traced process's region (preload/record/region.h):
// which ring pages populate_ahead allocates, read back with mincore().
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "region.h"

namespace {

using spoor::record::Region;
using spoor::record::RegionLayout;

constexpr uint64_t kPage = 4096;

// Of the pages [offset, offset + bytes) of `cpu`'s ring overlaps: how many
// there are and how many are resident (allocated).
struct Pages {
  size_t total = 0, resident = 0;
};
Pages pages(const Region& region, uint32_t cpu, uint64_t offset, uint64_t bytes) {
  const spoor::RingView& ring = region.ring();
  const auto start = reinterpret_cast<uintptr_t>(ring.data + (uint64_t{cpu} << ring.ring_shift) + offset);
  const uintptr_t from = start & ~(kPage - 1);
  const uintptr_t to = (start + bytes + kPage - 1) & ~(kPage - 1);
  std::vector<unsigned char> in((to - from) / kPage);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(from), to - from, in.data()), 0);
  Pages p{in.size(), 0};
  for (unsigned char c : in) p.resident += c & 1;
  return p;
}

bool all_resident(const Region& region, uint32_t cpu, uint64_t offset, uint64_t bytes) {
  const Pages p = pages(region, cpu, offset, bytes);
  return p.total > 0 && p.resident == p.total;
}

// None of the range's pages, leaving out the pages at its ends: the ring's
// data need not start on a page boundary, so they may be shared with a
// neighbour (populated, or the ring's headers).
bool none_resident(const Region& region, uint32_t cpu, uint64_t offset, uint64_t bytes) {
  return pages(region, cpu, offset + kPage, bytes - 2 * kPage).resident == 0;
}

// Where CPU `cpu`'s writers are, as a writer's reservation leaves it.
void move_writers(const Region& region, uint32_t cpu, uint64_t position) {
  region.ring().cpus[cpu].head.store(position & spoor::kPosMask, std::memory_order_relaxed);
}

// A region as spoor record makes it: 2 CPUs, 32 MiB rings, 128 KiB packets.
class RegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(region.create({.cpus = 2, .buffer_bytes_per_cpu = 32u << 20, .packet_bytes = 128u << 10}, &error))
        << error;
    ring_bytes = uint64_t{1} << region.ring().ring_shift;
  }
  Region region;
  uint64_t ring_bytes = 0;
};

TEST_F(RegionTest, RingPagesStayUntouchedUntilAWriterMoves) {
  region.populate_ahead();
  EXPECT_TRUE(none_resident(region, 0, 0, ring_bytes));
  EXPECT_TRUE(none_resident(region, 1, 0, ring_bytes));
}

TEST_F(RegionTest, PopulatesAheadOfTheWritersOfEachCpuOnly) {
  ASSERT_GE(ring_bytes, 8u << 20);

  // 4 KiB written on CPU 0 (a short process): the next 32 KiB are
  // allocated, nothing more.
  move_writers(region, 0, 4u << 10);
  region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, 4u << 10, 32u << 10));
  EXPECT_TRUE(none_resident(region, 0, (4u + 32u) << 10, ring_bytes - ((4u + 32u) << 10)));
  EXPECT_TRUE(none_resident(region, 1, 0, ring_bytes));

  // 64 KiB written: as far ahead as written (64 KiB more), nothing more.
  move_writers(region, 0, 64u << 10);
  region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, 64u << 10, 64u << 10));
  EXPECT_TRUE(none_resident(region, 0, 128u << 10, ring_bytes - (128u << 10)));
  EXPECT_TRUE(none_resident(region, 1, 0, ring_bytes));

  // 2 MiB written: as far ahead as written (2 MiB more), 1 MiB per call.
  move_writers(region, 0, 2u << 20);
  region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, 2u << 20, 1u << 20));
  EXPECT_TRUE(none_resident(region, 0, 3u << 20, 1u << 20));
  region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, 2u << 20, 2u << 20));
  // Pages behind the writers are theirs to fault: skipped, not filled in.
  EXPECT_TRUE(none_resident(region, 0, 512u << 10, 1u << 20));
  EXPECT_TRUE(none_resident(region, 1, 0, ring_bytes));

  // Near the end of the first lap, never past the ring.
  move_writers(region, 1, ring_bytes - (128u << 10));
  region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 1, ring_bytes - (128u << 10), 128u << 10));
  EXPECT_TRUE(none_resident(region, 1, 0, ring_bytes - (128u << 10)));
}

// Writers that went back to the start of the ring (ring.cpp's
// rewind_target) are in a later lap but have reached only as far as the
// furthest packet they opened: populate_ahead goes on from there, instead
// of taking the ring as faulted in whole.
TEST_F(RegionTest, PopulatesAheadOfTheFurthestPacketOnceTheWritersWentBackToTheStart) {
  ASSERT_GE(ring_bytes, 8u << 20);
  move_writers(region, 0, ring_bytes + (8u << 10));
  region.ring().cpus[0].furthest = 2u << 20;
  region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, 2u << 20, 1u << 20));
  EXPECT_TRUE(none_resident(region, 0, 3u << 20, ring_bytes - (3u << 20)));
  EXPECT_TRUE(none_resident(region, 1, 0, ring_bytes));
  // Once they went round the whole ring, there is nothing left to do.
  region.ring().cpus[0].furthest = ring_bytes;
  region.populate_ahead();
  EXPECT_TRUE(none_resident(region, 0, 4u << 20, ring_bytes - (4u << 20)));
}

// While the drainer keeps up, writers in a ring this large go back to its
// start one packet past kRingRewindAfter (ring.cpp's rewind_target): the
// pages beyond are not allocated ahead of them. Writers past that point
// (their drainer fell behind) are populated ahead of as far as before.
TEST_F(RegionTest, PopulatesNoFurtherThanWhereTheWritersGoBackWhileTheDrainerKeepsUp) {
  const uint32_t packet = region.ring().subbuf_size;
  const uint64_t back_at = spoor::kRingRewindAfter + packet;
  ASSERT_EQ(spoor::ring_reach_while_drained(ring_bytes, packet), back_at);
  move_writers(region, 0, 3u << 20);
  for (int i = 0; i < 4; ++i) region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, 3u << 20, back_at - (3u << 20)));
  EXPECT_TRUE(none_resident(region, 0, back_at, ring_bytes - back_at));

  move_writers(region, 0, back_at + (8u << 10));
  for (int i = 0; i < 8; ++i) region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, back_at + (8u << 10), 4u << 20));
  EXPECT_TRUE(none_resident(region, 1, 0, ring_bytes));
}

// A ring under 4 * kRingRewindAfter never goes back: populated ahead to its end.
TEST(RegionSmallRing, IsPopulatedAheadToItsEnd) {
  Region region;
  std::string error;
  ASSERT_TRUE(region.create({.cpus = 1, .buffer_bytes_per_cpu = 8u << 20, .packet_bytes = 128u << 10}, &error))
      << error;
  const uint64_t ring_bytes = uint64_t{1} << region.ring().ring_shift;
  ASSERT_LT(ring_bytes, 4 * spoor::kRingRewindAfter);
  EXPECT_EQ(spoor::ring_reach_while_drained(ring_bytes, region.ring().subbuf_size), ring_bytes);
  move_writers(region, 0, 4u << 20);
  for (int i = 0; i < 8; ++i) region.populate_ahead();
  EXPECT_TRUE(all_resident(region, 0, 4u << 20, ring_bytes - (4u << 20)));
}

}  // namespace
