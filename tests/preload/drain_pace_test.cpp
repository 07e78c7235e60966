// The drain loop's poll wait: 1 ms while events come, doubling to 16 ms
// while none do, to a second while no traced image is open.
#include <gtest/gtest.h>

#include <vector>

#include "../../preload/record/drain_pace.h"

namespace {

using spoor::record::drain_fell_behind;
using spoor::record::kMostIdleWaitMs;
using spoor::record::kMostIdleWaitNothingOpenMs;
using spoor::record::next_poll_wait_ms;

TEST(DrainPace, IdleTurnsDoubleTheWaitUpToTheMost) {
  std::vector<int> waits;
  int wait = 1;
  for (int turn = 0; turn < 7; ++turn) waits.push_back(wait = next_poll_wait_ms(wait, false));
  EXPECT_EQ(waits, (std::vector<int>{2, 4, 8, 16, 16, 16, 16}));
  EXPECT_EQ(kMostIdleWaitMs, 16);
}

TEST(DrainPace, WithNoImageOpenIdleTurnsDoubleTheWaitToASecond) {
  std::vector<int> waits;
  int wait = 16;
  for (int turn = 0; turn < 8; ++turn) waits.push_back(wait = next_poll_wait_ms(wait, false, false));
  EXPECT_EQ(waits, (std::vector<int>{32, 64, 128, 256, 512, 1024, 1024, 1024}));
  EXPECT_EQ(kMostIdleWaitNothingOpenMs, 1024);
  EXPECT_EQ(next_poll_wait_ms(1024, false, true), 16) << "an image connected: back to the usual most";
  EXPECT_EQ(next_poll_wait_ms(1024, true, false), 1) << "a turn that drained something";
}

TEST(DrainPace, ABusyTurnGoesBackToOneMillisecond) {
  EXPECT_EQ(next_poll_wait_ms(16, true), 1);
  EXPECT_EQ(next_poll_wait_ms(4, true), 1);
  EXPECT_EQ(next_poll_wait_ms(1, true), 1);
  EXPECT_EQ(next_poll_wait_ms(0, false), 1) << "never a poll that does not wait";
}

TEST(DrainPace, APassOfThreeTurnsIsBehind) {
  EXPECT_FALSE(drain_fell_behind(1));
  EXPECT_FALSE(drain_fell_behind(2)) << "a drain that keeps up";
  EXPECT_TRUE(drain_fell_behind(3)) << "over 1 MiB waiting in one ring";
  EXPECT_TRUE(drain_fell_behind(40));
}

}  // namespace
