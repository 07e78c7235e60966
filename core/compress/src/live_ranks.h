// LiveRanks: which entries of one column are still live (their value has
// not appeared again since), and an entry's rank among the live ones
// counted from the newest. A Fenwick tree over the column's positions:
// each operation costs O(log n), about 20 steps for a 4 MiB run.
//
// The reference-columns layout (reference_columns.h) names an earlier
// pointer by this rank: a free() names one of the blocks still allocated,
// a malloc() one of the chunks freed and not yet reused, so ranks stay
// near the number of live blocks (or of free chunks) instead of growing
// with the distance in records.
#ifndef SPOOR_COMPRESS_LIVE_RANKS_H
#define SPOOR_COMPRESS_LIVE_RANKS_H

#include <cstdint>
#include <vector>

namespace spoor::compress {

class LiveRanks {
 public:
  explicit LiveRanks(uint32_t positions) : tree_(positions + 1, 0), alive_(positions, 0) {}

  uint32_t live() const { return live_; }
  uint32_t positions() const { return static_cast<uint32_t>(alive_.size()); }
  bool alive(uint32_t position) const { return alive_[position] != 0; }

  // `position` < positions(), not live yet.
  void add(uint32_t position) {
    change(position, 1);
    alive_[position] = 1;
    ++live_;
  }
  // `position` must be live.
  void remove(uint32_t position) {
    change(position, -1);
    alive_[position] = 0;
    --live_;
  }

  // 1 for the newest live entry, 2 for the one before it... `position`
  // must be live.
  uint32_t rank_of(uint32_t position) const { return live_ - live_up_to(position) + 1; }

  // The position of the live entry of rank `rank` (1..live()).
  uint32_t position_of(uint32_t rank) const {
    uint32_t k = live_ - rank + 1;  // k-th live entry from the oldest
    uint32_t at = 0;
    uint32_t step = 1;
    while (step * 2 < tree_.size()) step *= 2;
    for (; step > 0; step /= 2) {
      if (at + step < tree_.size() && static_cast<uint32_t>(tree_[at + step]) < k) {
        at += step;
        k -= static_cast<uint32_t>(tree_[at]);
      }
    }
    return at;  // tree index at+1, position at
  }

 private:
  void change(uint32_t position, int32_t by) {
    for (uint32_t i = position + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += by;
  }
  // Live entries at positions 0..position.
  uint32_t live_up_to(uint32_t position) const {
    int32_t sum = 0;
    for (uint32_t i = position + 1; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return static_cast<uint32_t>(sum);
  }

  std::vector<int32_t> tree_;
  std::vector<uint8_t> alive_;
  uint32_t live_ = 0;
};

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_LIVE_RANKS_H
