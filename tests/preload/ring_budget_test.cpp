// spoor record's default rings under an address-space limit: halved from
// the default until a process's rings fit in 1/32 of the limit.
#include <gtest/gtest.h>

#include <cstdint>

#include "../../preload/record/ring_budget.h"

namespace {

using spoor::record::ring_bytes_within_limit;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kDefault = 32 * kMiB;
constexpr size_t kSmallest = 256 * 1024;  // two 128 KiB packets

TEST(RingBudget, NoLimitKeepsTheDefault) {
  EXPECT_EQ(ring_bytes_within_limit(UINT64_MAX, 2, kDefault, kSmallest), kDefault);
  EXPECT_EQ(ring_bytes_within_limit(UINT64_MAX, 256, kDefault, kSmallest), kDefault);
}

TEST(RingBudget, ALimitRoomyEnoughKeepsTheDefault) {
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{2} << 30, 2, kDefault, kSmallest), kDefault) << "2 GiB on 2 CPUs";
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{64} * 32 * kDefault, 64, kDefault, kSmallest), kDefault)
      << "exactly 1/32 of the limit on 64 CPUs";
}

TEST(RingBudget, ATightLimitHalvesTheRingsUntilTheyFit) {
  // ulimit -v 100000 (KiB): 97.7 MiB; 1/32 of it over 2 CPUs is 1.5 MiB.
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{100000} * 1024, 2, kDefault, kSmallest), 1 * kMiB);
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{200000} * 1024, 2, kDefault, kSmallest), 2 * kMiB);
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{1} << 30, 2, kDefault, kSmallest), 16 * kMiB) << "1 GiB";
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{4} << 30, 64, kDefault, kSmallest), 2 * kMiB) << "4 GiB on 64 CPUs";
}

TEST(RingBudget, NeverBelowTheSmallestRing) {
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{10} << 20, 2, kDefault, kSmallest), kSmallest) << "10 MiB";
  EXPECT_EQ(ring_bytes_within_limit(1, 2, kDefault, kSmallest), kSmallest);
}

TEST(RingBudget, AGivenSizeIsHalvedTheSameWay) {
  // The preferred size need not be the default; 3 MiB halves to 1.5 MiB.
  EXPECT_EQ(ring_bytes_within_limit(uint64_t{100000} * 1024, 2, 3 * kMiB, kSmallest), 3 * kMiB / 2);
}

}  // namespace
