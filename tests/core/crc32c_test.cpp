// crc32c() (the SSE4.2 lanes on a hosted x86-64 build, the nibble table
// elsewhere) gives the CRC-32C of a bit-at-a-time reference on every length
// and split, so a fast path that joins its lanes wrongly cannot go unseen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "spoor/crc32c.h"

namespace {

// CRC-32C straight from its definition: reflected polynomial 0x82F63B78,
// initial and final inversion, one bit at a time.
uint32_t reference_crc32c(uint32_t crc, const uint8_t* p, size_t n) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(n);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

TEST(Crc32c, MatchesTheStandardCheckValue) {
  const char digits[] = "123456789";
  EXPECT_EQ(spoor::crc32c(0, digits, 9), 0xE3069283u);
}

TEST(Crc32c, MatchesTheReferenceOnEveryLengthAroundTheLaneSizes) {
  // Lanes of 512 and 8192 bytes, three at a time: lengths just below, at
  // and above each multiple, and every length up to a few lanes.
  const std::vector<uint8_t> data = random_bytes(4 * 3 * 8192 + 64, 1);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 3 * 3 * 512 + 40; ++n) lengths.push_back(n);
  for (size_t lanes = 1; lanes <= 4; ++lanes)
    for (size_t d = 0; d <= 24; ++d) {
      lengths.push_back(lanes * 3 * 8192 - d);
      lengths.push_back(lanes * 3 * 8192 + d);
    }
  for (size_t n : lengths) {
    ASSERT_LE(n, data.size());
    // A misaligned start too: the lanes load unaligned words.
    for (size_t start : {size_t{0}, size_t{3}}) {
      if (start + n > data.size()) continue;
      ASSERT_EQ(spoor::crc32c(0, data.data() + start, n), reference_crc32c(0, data.data() + start, n))
          << "length " << n << ", offset " << start;
    }
  }
}

TEST(Crc32c, GivesTheSameResultFedInRandomPieces) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    const std::vector<uint8_t> data = random_bytes(1 + rng() % 200000, static_cast<uint32_t>(round + 100));
    const uint32_t whole = reference_crc32c(0, data.data(), data.size());
    uint32_t crc = 0;
    for (size_t at = 0; at < data.size();) {
      const size_t piece = std::min<size_t>(data.size() - at, rng() % 40000);
      crc = spoor::crc32c(crc, data.data() + at, piece);
      at += piece;
    }
    ASSERT_EQ(crc, whole) << "round " << round << ", " << data.size() << " bytes";
    ASSERT_EQ(spoor::crc32c(0, data.data(), data.size()), whole);
  }
}

TEST(Crc32c, ContinuesFromANonZeroState) {
  const std::vector<uint8_t> data = random_bytes(3 * 8192 * 2 + 1000, 3);
  for (uint32_t start : {0x1u, 0xFFFFFFFFu, 0x12345678u})
    EXPECT_EQ(spoor::crc32c(start, data.data(), data.size()), reference_crc32c(start, data.data(), data.size()));
}

}  // namespace
