// spoor record's default rings under an address-space limit, halved from
// the default until a process's rings fit in 1/32 of the limit, and under
// a memory limit, in 1/4 of it.
#include <gtest/gtest.h>

#include <cstdint>

#include "../../preload/record/ring_budget.h"

namespace {

using spoor::record::default_rings;
using spoor::record::ring_bytes_within_limit;
using spoor::record::RingLimit;

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

TEST(RingBudget, AMemoryLimitHalvesTheRingsUntilAQuarterHoldsThem) {
  // 100 MiB on 2 CPUs: 12.5 MiB each, so 8; the default from 256 MiB up.
  EXPECT_EQ(default_rings(UINT64_MAX, uint64_t{100} << 20, 2, kDefault, kSmallest).bytes_per_cpu, 8 * kMiB);
  EXPECT_EQ(default_rings(UINT64_MAX, uint64_t{100} << 20, 2, kDefault, kSmallest).limited_by, RingLimit::memory);
  EXPECT_EQ(default_rings(UINT64_MAX, uint64_t{256} << 20, 2, kDefault, kSmallest).bytes_per_cpu, kDefault);
  EXPECT_EQ(default_rings(UINT64_MAX, uint64_t{256} << 20, 2, kDefault, kSmallest).limited_by, RingLimit::none);
  EXPECT_EQ(default_rings(UINT64_MAX, uint64_t{1} << 30, 64, kDefault, kSmallest).bytes_per_cpu, 4 * kMiB)
      << "1 GiB on 64 CPUs";
  EXPECT_EQ(default_rings(UINT64_MAX, uint64_t{16} << 20, 64, kDefault, kSmallest).bytes_per_cpu, kSmallest);
}

TEST(RingBudget, TheTighterLimitDecidesAndIsNamed) {
  const uint64_t none = UINT64_MAX;
  EXPECT_EQ(default_rings(none, none, 2, kDefault, kSmallest).bytes_per_cpu, kDefault);
  EXPECT_EQ(default_rings(none, none, 2, kDefault, kSmallest).limited_by, RingLimit::none);
  // ulimit -v 100000 gives 1 MiB; a 100 MiB cgroup 8: the address space decides.
  const auto both = default_rings(uint64_t{100000} * 1024, uint64_t{100} << 20, 2, kDefault, kSmallest);
  EXPECT_EQ(both.bytes_per_cpu, 1 * kMiB);
  EXPECT_EQ(both.limited_by, RingLimit::address_space);
  // ulimit -v of 4 GiB gives 32 MiB; a 100 MiB cgroup 8: memory decides.
  const auto memory = default_rings(uint64_t{4} << 30, uint64_t{100} << 20, 2, kDefault, kSmallest);
  EXPECT_EQ(memory.bytes_per_cpu, 8 * kMiB);
  EXPECT_EQ(memory.limited_by, RingLimit::memory);
  // Where both halve to the same size, the address space is named.
  EXPECT_EQ(default_rings(uint64_t{1} << 30, uint64_t{128} << 20, 2, kDefault, kSmallest).limited_by,
            RingLimit::address_space)
      << "16 MiB each way";
}

}  // namespace
