// spoor record --time-resolution: the largest power of two of ticks that
// lasts at most the resolution asked for.
#include <gtest/gtest.h>

#include "../../preload/record/time_grain.h"

namespace {

using spoor::record::time_grain_ticks;

constexpr uint64_t kGHz = 1'000'000'000'000ull;  // in milli-hertz

TEST(TimeGrain, TheLargestPowerOfTwoOfTicksWithinTheResolution) {
  EXPECT_EQ(time_grain_ticks(10, 2600 * kGHz / 1000), 16u) << "2.6 GHz: 26 ticks in 10 ns";
  EXPECT_EQ(time_grain_ticks(10, 3200 * kGHz / 1000), 32u) << "3.2 GHz: exactly 32 ticks";
  EXPECT_EQ(time_grain_ticks(10, kGHz), 8u) << "a nanosecond clock";
  EXPECT_EQ(time_grain_ticks(1000, 24 * kGHz / 1000), 16u) << "aarch64's 24 MHz counter: 24 ticks a microsecond";
}

TEST(TimeGrain, EveryTickWhenNoCoarserGrainFits) {
  EXPECT_EQ(time_grain_ticks(0, 2600 * kGHz / 1000), 1u) << "0 asks for every tick";
  EXPECT_EQ(time_grain_ticks(10, 24 * kGHz / 1000), 1u) << "one 24 MHz tick is 41.7 ns";
  EXPECT_EQ(time_grain_ticks(10, 0), 1u) << "an unknown frequency";
  EXPECT_EQ(time_grain_ticks(-5, kGHz), 1u);
}

TEST(TimeGrain, AHugeResolutionStopsAtAMillionTicks) {
  EXPECT_EQ(time_grain_ticks(1e9, kGHz), uint64_t{1} << 20);
}

}  // namespace
