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
// and three counters (no tree walk). rank_of() counts from the newest
// position backwards without a loop below the block level: a popcount, the
// block's 16 word counts summed as two masked 8-byte words, then the block
// counts four at a time and the super-block counts (entries are found close
// to the newest on heap traces, so these loops run 0-2 times): about 40
// instructions and 1-2 branches that depend on the position. position_of()
// (the reader's) walks the counts down.
#ifndef SPOOR_COMPRESS_LIVE_RANKS_H
#define SPOOR_COMPRESS_LIVE_RANKS_H

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

namespace spoor::compress {

// The bytes of lanes j + 1 .. 7 of a word.
constexpr uint64_t lanes_after(uint32_t j) { return j >= 7 ? 0 : ~uint64_t{0} << (8 * (j + 1)); }

// at[b][j]: the index (0-7) of the (j + 1)-th set bit of byte b counted
// from its top bit.
struct SelectInByte {
  uint8_t at[256][8];
};
constexpr SelectInByte make_select_in_byte() {
  SelectInByte t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t j = 0;
    for (int bit = 7; bit >= 0; --bit)
      if ((b >> bit & 1) != 0) t.at[b][j++] = static_cast<uint8_t>(bit);
  }
  return t;
}
inline constexpr SelectInByte kSelectInByte = make_select_in_byte();

class LiveRanks {
 public:
  LiveRanks() = default;
  explicit LiveRanks(uint32_t positions) { reset(positions); }

  // Empties it for `positions` positions, keeping its memory.
  void reset(uint32_t positions) {
    const uint32_t words = (positions + 63) / 64;
    bits_.assign(words, 0);
    // Whole blocks of word counts and whole fours of block counts: rank_of
    // reads them so.
    word_live_.assign((words + kWordsPerBlock - 1) / kWordsPerBlock * kWordsPerBlock, 0);
    block_live_.assign(((words + kWordsPerBlock - 1) / kWordsPerBlock + 3) / 4 * 4, 0);
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
  // must be live. Counts past the newest position are 0, so every sum
  // runs to the end of its block or super-block without a bound check.
  uint32_t rank_of(uint32_t position) const {
    const uint32_t word = position / 64;
    uint32_t rank = bit_count(bits_[word] >> (position % 64));
    // The words after `word` in its block: 16 byte counts, masked.
    const uint32_t block = word / kWordsPerBlock;
    uint64_t lo = 0, hi = 0;
    std::memcpy(&lo, word_live_.data() + block * kWordsPerBlock, 8);
    std::memcpy(&hi, word_live_.data() + block * kWordsPerBlock + 8, 8);
    const uint32_t j = word % kWordsPerBlock;  // lanes > j count
    lo &= kLowAfter[j];
    hi &= kHighAfter[j];
    rank += byte_sum(lo) + byte_sum(hi);
    // The blocks after `block` in its super-block, four at a time (each
    // count is at most 1,024: a pair of them fits a 32-bit lane).
    const uint32_t super = word / kWordsPerSuper;
    const uint32_t end_block = (end_word_ + kWordsPerBlock - 1) / kWordsPerBlock;
    const uint32_t blocks_end = min(end_block, (super + 1) * kBlocksPerSuper);
    uint32_t b = (block + 1) & ~3u;
    if (b < blocks_end) {
      uint64_t four = 0;
      std::memcpy(&four, block_live_.data() + b, 8);
      four &= ~uint64_t{0} << (16 * ((block + 1) & 3));
      uint64_t sum = (four & 0x0000FFFF0000FFFFull) + (four >> 16 & 0x0000FFFF0000FFFFull);
      for (b += 4; b < blocks_end; b += 4) {
        std::memcpy(&four, block_live_.data() + b, 8);
        sum += (four & 0x0000FFFF0000FFFFull) + (four >> 16 & 0x0000FFFF0000FFFFull);
      }
      rank += static_cast<uint32_t>(sum) + static_cast<uint32_t>(sum >> 32);
    }
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
    return word * 64 + select_from_top(bits_[word], k);
  }

  // The bit index of the k-th set bit of `bits` counted from the top
  // (k >= 1, at most its set bits): the byte that holds it from the bytes'
  // counts, then a table. Clearing the top bit k - 1 times cost a chain of
  // up to 63 dependent steps per decoded reference.
  static uint32_t select_from_top(uint64_t bits, uint32_t k) {
    uint64_t counts = bits - (bits >> 1 & 0x5555555555555555ull);
    counts = (counts & 0x3333333333333333ull) + (counts >> 2 & 0x3333333333333333ull);
    counts = (counts + (counts >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    uint32_t byte = 7;
    for (uint32_t c = counts >> 56; c < k; c = counts >> (8 * byte) & 0xFF) {
      k -= c;
      --byte;
    }
    return 8 * byte + kSelectInByte.at[bits >> (8 * byte) & 0xFF][k - 1];
  }

 private:
  static constexpr uint32_t kWordsPerBlock = 16;
  static constexpr uint32_t kBlocksPerSuper = 64;
  static constexpr uint32_t kWordsPerSuper = kWordsPerBlock * kBlocksPerSuper;
  static uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
  // The lanes after lane j (0..15) of 16 byte counts, in their low and
  // high words: tables, not branches, as j is as random as the positions.
  static constexpr uint64_t kLowAfter[16] = {lanes_after(0), lanes_after(1), lanes_after(2), lanes_after(3),
                                             lanes_after(4), lanes_after(5), lanes_after(6), 0, 0, 0, 0, 0, 0, 0, 0, 0};
  static constexpr uint64_t kHighAfter[16] = {
      ~uint64_t{0},   ~uint64_t{0},   ~uint64_t{0},   ~uint64_t{0},   ~uint64_t{0},   ~uint64_t{0},
      ~uint64_t{0},   ~uint64_t{0},   lanes_after(0), lanes_after(1), lanes_after(2), lanes_after(3),
      lanes_after(4), lanes_after(5), lanes_after(6), 0};
  // Set bits of `v`, inline: without -mpopcnt std::popcount is a libgcc call.
  static uint32_t bit_count(uint64_t v) {
    v = v - (v >> 1 & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + (v >> 2 & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return static_cast<uint32_t>((v * 0x0101010101010101ull) >> 56);
  }
  // The sum of the 8 bytes of `v`.
  static uint32_t byte_sum(uint64_t v) {
    const uint64_t pairs = (v & 0x00FF00FF00FF00FFull) + (v >> 8 & 0x00FF00FF00FF00FFull);
    return static_cast<uint32_t>((pairs * 0x0001000100010001ull) >> 48);
  }

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
