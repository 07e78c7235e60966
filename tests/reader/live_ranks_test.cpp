// LiveRanks (core/compress/src/live_ranks.h) against counting by hand: the
// reference columns' codes are these ranks, so writer and reader must
// agree with the definition, not only with each other.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "live_ranks.h"

namespace spoor::compress {
namespace {

// Ranks by definition: 1 for the newest live position, counting down.
std::vector<uint32_t> live_newest_first(const std::vector<bool>& live) {
  std::vector<uint32_t> order;
  for (size_t p = live.size(); p > 0; --p)
    if (live[p - 1]) order.push_back(static_cast<uint32_t>(p - 1));
  return order;
}

void expect_ranks(const LiveRanks& ranks, const std::vector<bool>& live, std::mt19937_64& rng, int probes) {
  const std::vector<uint32_t> order = live_newest_first(live);
  ASSERT_EQ(ranks.live(), order.size());
  for (int i = 0; i < probes && !order.empty(); ++i) {
    // The newest and oldest few, and any.
    const size_t k = i < 8 ? static_cast<size_t>(i) % order.size()
                     : i < 16 ? order.size() - 1 - static_cast<size_t>(i - 8) % order.size()
                              : rng() % order.size();
    ASSERT_EQ(ranks.rank_of(order[k]), k + 1) << "position " << order[k];
    ASSERT_EQ(ranks.position_of(static_cast<uint32_t>(k + 1)), order[k]) << "rank " << k + 1;
    ASSERT_TRUE(ranks.alive(order[k]));
  }
}

// The k-th set bit from the top of one word, against a walk down the bits:
// every k of random words, dense and sparse, and of the edge words.
TEST(LiveRanks, SelectFromTopFindsEveryKthSetBit) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> words = {1, uint64_t{1} << 63, ~uint64_t{0}, 0x8000000000000001ull, 0x00FF00000000FF00ull};
  for (int i = 0; i < 2000; ++i) words.push_back(i % 2 ? rng() : rng() & rng() & rng());
  for (const uint64_t w : words) {
    uint32_t k = 0;
    for (int bit = 63; bit >= 0; --bit) {
      if ((w >> bit & 1) == 0) continue;
      ++k;
      ASSERT_EQ(LiveRanks::select_from_top(w, k), static_cast<uint32_t>(bit)) << std::hex << w << " k " << k;
    }
  }
}

TEST(LiveRanks, RanksCountLiveEntriesFromTheNewestAcrossSuperBlocks) {
  // 200,000 positions: three super-blocks of 65,536; entries added in
  // order (as a column's positions are), removed anywhere.
  constexpr uint32_t kPositions = 200000;
  std::mt19937_64 rng(3);
  LiveRanks ranks(kPositions);
  std::vector<bool> live(kPositions, false);
  std::vector<uint32_t> alive_list;
  for (uint32_t p = 0; p < kPositions; ++p) {
    ranks.add(p);
    live[p] = true;
    alive_list.push_back(p);
    // Remove one now and then: recent ones mostly, some very old.
    if (rng() % 3 == 0 && alive_list.size() > 1) {
      const size_t back = rng() % 4 == 0 ? rng() % alive_list.size() : alive_list.size() - 1 - rng() % std::min<size_t>(alive_list.size(), 2000);
      const uint32_t q = alive_list[back];
      alive_list[back] = alive_list.back();
      alive_list.pop_back();
      ranks.remove(q);
      live[q] = false;
      EXPECT_FALSE(ranks.alive(q));
    }
    if (p % 20000 == 19999) expect_ranks(ranks, live, rng, 200);
  }
  // Empty whole words and blocks at the newest end, then check again.
  for (uint32_t p = kPositions - 5000; p < kPositions; ++p)
    if (live[p]) {
      ranks.remove(p);
      live[p] = false;
    }
  expect_ranks(ranks, live, rng, 500);
}

// Every live position's rank, in a column whose live entries sit on
// each side of word, block (16 words), four-block and super-block (1,024
// words) boundaries, the newest among them: rank_of sums counts in masked
// groups, and a lane off by one anywhere shows here.
TEST(LiveRanks, EveryLivePositionsRankAcrossBoundaries) {
  constexpr uint32_t kPositions = 3 * 65536 + 700;
  std::mt19937_64 rng(17);
  LiveRanks ranks(kPositions);
  std::vector<bool> live(kPositions, false);
  for (uint32_t p = 0; p < kPositions; ++p) {
    const bool edge = p % 64 == 0 || p % 64 == 63 || p % 1024 < 2 || p % 4096 > 4093 || p % 65536 < 3;
    if (edge || rng() % 97 == 0) {
      ranks.add(p);
      live[p] = true;
    }
  }
  auto check_all = [&]() {
    const std::vector<uint32_t> order = live_newest_first(live);
    ASSERT_EQ(ranks.live(), order.size());
    for (size_t k = 0; k < order.size(); ++k) ASSERT_EQ(ranks.rank_of(order[k]), k + 1) << "position " << order[k];
  };
  check_all();
  // Thin it out, then empty the newest super-block but one entry.
  for (uint32_t p = 0; p < kPositions; ++p)
    if (live[p] && rng() % 2 == 0) {
      ranks.remove(p);
      live[p] = false;
    }
  check_all();
  for (uint32_t p = 3 * 65536 + 1; p < kPositions; ++p)
    if (live[p]) {
      ranks.remove(p);
      live[p] = false;
    }
  check_all();
}

TEST(LiveRanks, AResetColumnStartsEmpty) {
  LiveRanks ranks(1000);
  for (uint32_t p = 0; p < 1000; ++p) ranks.add(p);
  ranks.reset(70000);
  EXPECT_EQ(ranks.live(), 0u);
  EXPECT_EQ(ranks.positions(), 70000u);
  ranks.add(5);
  ranks.add(69999);
  EXPECT_EQ(ranks.rank_of(69999), 1u);
  EXPECT_EQ(ranks.rank_of(5), 2u);
  EXPECT_EQ(ranks.position_of(2), 5u);
  EXPECT_FALSE(ranks.alive(6));
}

}  // namespace
}  // namespace spoor::compress
