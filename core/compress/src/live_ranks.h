// LiveRanks: which entries of one column are still live (their value has
// not appeared again since), and an entry's rank among the live ones
// counted from the newest. One bit per position, and a Fenwick tree over
// the live counts of 64-position words: a 16 MiB run's column of ~700,000
// positions keeps its tree in ~44 KB, so each operation is a popcount and
// about 14 steps that stay in the cache.
//
// The reference-columns layout (reference_columns.h) names an earlier
// pointer by this rank: a free() names one of the blocks still allocated,
// a malloc() one of the chunks freed and not yet reused, so ranks stay
// near the number of live blocks (or of free chunks) instead of growing
// with the distance in records.
#ifndef SPOOR_COMPRESS_LIVE_RANKS_H
#define SPOOR_COMPRESS_LIVE_RANKS_H

#include <bit>
#include <cstdint>
#include <vector>

namespace spoor::compress {

class LiveRanks {
 public:
  explicit LiveRanks(uint32_t positions)
      : bits_((positions + 63) / 64, 0), tree_(bits_.size() + 1, 0), positions_(positions) {}

  uint32_t live() const { return live_; }
  uint32_t positions() const { return positions_; }
  bool alive(uint32_t position) const { return (bits_[position / 64] >> (position % 64) & 1) != 0; }

  // `position` < positions(), not live yet.
  void add(uint32_t position) {
    bits_[position / 64] |= uint64_t{1} << (position % 64);
    change(position / 64, 1);
    ++live_;
  }
  // `position` must be live.
  void remove(uint32_t position) {
    bits_[position / 64] &= ~(uint64_t{1} << (position % 64));
    change(position / 64, -1);
    --live_;
  }

  // 1 for the newest live entry, 2 for the one before it... `position`
  // must be live.
  uint32_t rank_of(uint32_t position) const {
    const uint32_t word = position / 64;
    const uint64_t up_to = bits_[word] & (~uint64_t{0} >> (63 - position % 64));
    return live_ - (live_before(word) + static_cast<uint32_t>(std::popcount(up_to))) + 1;
  }

  // The position of the live entry of rank `rank` (1..live()).
  uint32_t position_of(uint32_t rank) const {
    uint32_t k = live_ - rank + 1;  // k-th live entry from the oldest
    // The word holding it: the Fenwick tree's binary search.
    uint32_t at = 0;
    uint32_t step = 1;
    while (step * 2 < tree_.size()) step *= 2;
    for (; step > 0; step /= 2) {
      if (at + step < tree_.size() && static_cast<uint32_t>(tree_[at + step]) < k) {
        at += step;
        k -= static_cast<uint32_t>(tree_[at]);
      }
    }
    // Its k-th set bit.
    uint64_t bits = bits_[at];
    for (uint32_t i = 1; i < k; ++i) bits &= bits - 1;
    return at * 64 + static_cast<uint32_t>(std::countr_zero(bits));
  }

 private:
  void change(uint32_t word, int32_t by) {
    for (uint32_t i = word + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += by;
  }
  // Live entries in the words before `word`.
  uint32_t live_before(uint32_t word) const {
    int32_t sum = 0;
    for (uint32_t i = word; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return static_cast<uint32_t>(sum);
  }

  std::vector<uint64_t> bits_;  // bit p % 64 of word p / 64: position p is live
  std::vector<int32_t> tree_;   // Fenwick tree of the words' live counts
  uint32_t positions_;
  uint32_t live_ = 0;
};

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_LIVE_RANKS_H
