// LiveRanks: which entries of one column are still live (their value has
// not appeared again since), and an entry's rank among the live ones
// counted from the newest.
//
// The reference-columns layout (reference_columns.h) names an earlier
// pointer by this rank: a free() names one of the blocks still allocated,
// a malloc() one of the chunks freed and not yet reused, so ranks stay
// near the number of live blocks (or of free chunks) instead of growing
// with the distance in records.
//
// One bit per position, and live counts per 64-position word, per block of
// 16 words and per super-block of 64 blocks. add() and remove() are a bit
// and three counters (no tree walk). rank_of() and position_of() count
// from the newest position backwards: a popcount, at most 15 word counts,
// then block and super-block counts; entries are found close to the newest
// on heap traces (blocks live for about as many allocations as there are
// live blocks), so that is a handful of additions from the cache.
#ifndef SPOOR_COMPRESS_LIVE_RANKS_H
#define SPOOR_COMPRESS_LIVE_RANKS_H

#include <bit>
#include <cstdint>
#include <vector>

namespace spoor::compress {

class LiveRanks {
 public:
  LiveRanks() = default;
  explicit LiveRanks(uint32_t positions) { reset(positions); }

  // Empties it for `positions` positions, keeping its memory.
  void reset(uint32_t positions) {
    const uint32_t words = (positions + 63) / 64;
    bits_.assign(words, 0);
    word_live_.assign(words, 0);
    block_live_.assign((words + kWordsPerBlock - 1) / kWordsPerBlock, 0);
    super_live_.assign((block_live_.size() + kBlocksPerSuper - 1) / kBlocksPerSuper, 0);
    positions_ = positions;
    live_ = 0;
    end_word_ = 0;
  }

  uint32_t live() const { return live_; }
  uint32_t positions() const { return positions_; }
  bool alive(uint32_t position) const { return (bits_[position / 64] >> (position % 64) & 1) != 0; }

  // `position` < positions(), not live yet.
  void add(uint32_t position) {
    const uint32_t word = position / 64;
    bits_[word] |= uint64_t{1} << (position % 64);
    ++word_live_[word];
    ++block_live_[word / kWordsPerBlock];
    ++super_live_[word / kWordsPerSuper];
    ++live_;
    if (word >= end_word_) end_word_ = word + 1;
  }
  // `position` must be live.
  void remove(uint32_t position) {
    const uint32_t word = position / 64;
    bits_[word] &= ~(uint64_t{1} << (position % 64));
    --word_live_[word];
    --block_live_[word / kWordsPerBlock];
    --super_live_[word / kWordsPerSuper];
    --live_;
  }

  // 1 for the newest live entry, 2 for the one before it... `position`
  // must be live.
  uint32_t rank_of(uint32_t position) const {
    const uint32_t word = position / 64;
    uint32_t rank = static_cast<uint32_t>(std::popcount(bits_[word] >> (position % 64)));
    const uint32_t block = word / kWordsPerBlock, super = word / kWordsPerSuper;
    const uint32_t words_end = min(end_word_, (block + 1) * kWordsPerBlock);
    for (uint32_t w = word + 1; w < words_end; ++w) rank += word_live_[w];
    const uint32_t end_block = (end_word_ + kWordsPerBlock - 1) / kWordsPerBlock;
    const uint32_t blocks_end = min(end_block, (super + 1) * kBlocksPerSuper);
    for (uint32_t b = block + 1; b < blocks_end; ++b) rank += block_live_[b];
    const uint32_t end_super = (end_word_ + kWordsPerSuper - 1) / kWordsPerSuper;
    for (uint32_t s = super + 1; s < end_super; ++s) rank += super_live_[s];
    return rank;
  }

  // The position of the live entry of rank `rank` (1..live()).
  uint32_t position_of(uint32_t rank) const {
    uint32_t k = rank;
    uint32_t super = (end_word_ + kWordsPerSuper - 1) / kWordsPerSuper - 1;
    while (super_live_[super] < k) k -= super_live_[super--];
    const uint32_t end_block = (end_word_ + kWordsPerBlock - 1) / kWordsPerBlock;
    uint32_t block = min(end_block, (super + 1) * kBlocksPerSuper) - 1;
    while (block_live_[block] < k) k -= block_live_[block--];
    uint32_t word = min(end_word_, (block + 1) * kWordsPerBlock) - 1;
    while (word_live_[word] < k) k -= word_live_[word--];
    // Its k-th set bit from the top.
    uint64_t bits = bits_[word];
    for (uint32_t i = 1; i < k; ++i) bits &= ~(uint64_t{1} << (63 - std::countl_zero(bits)));
    return word * 64 + 63 - static_cast<uint32_t>(std::countl_zero(bits));
  }

 private:
  static constexpr uint32_t kWordsPerBlock = 16;
  static constexpr uint32_t kBlocksPerSuper = 64;
  static constexpr uint32_t kWordsPerSuper = kWordsPerBlock * kBlocksPerSuper;
  static uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }

  std::vector<uint64_t> bits_;        // bit p % 64 of word p / 64: position p is live
  std::vector<uint8_t> word_live_;    // live positions per word
  std::vector<uint16_t> block_live_;  // per block of kWordsPerBlock words
  std::vector<uint32_t> super_live_;  // per super-block of kBlocksPerSuper blocks
  uint32_t positions_ = 0;
  uint32_t live_ = 0;
  uint32_t end_word_ = 0;  // words past the newest position ever added
};

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_LIVE_RANKS_H
