// A constexpr SHA-1 (FIPS 180-4), used only to derive provider IDs from names
// at compile time the way ETW does. Not for security.
#ifndef SPOOR_SHA1_H
#define SPOOR_SHA1_H

#include <stdint.h>

namespace spoor {

class Sha1 {
 public:
  constexpr void update(uint8_t byte) {
    block_[fill_++] = byte;
    length_ += 8;
    if (fill_ == 64) compress();
  }

  // Writes the 20-byte digest. Call once.
  constexpr void finish(uint8_t out[20]) {
    uint64_t bits = length_;
    block_[fill_++] = 0x80;
    if (fill_ > 56) {
      while (fill_ < 64) block_[fill_++] = 0;
      compress();
    }
    while (fill_ < 56) block_[fill_++] = 0;
    for (int i = 7; i >= 0; --i) block_[fill_++] = static_cast<uint8_t>(bits >> (i * 8));
    compress();
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 4; ++j) out[i * 4 + j] = static_cast<uint8_t>(h_[i] >> (24 - j * 8));
  }

 private:
  static constexpr uint32_t rotl(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

  constexpr void compress() {
    uint32_t w[80] = {};
    for (int i = 0; i < 16; ++i)
      w[i] = (uint32_t{block_[i * 4]} << 24) | (uint32_t{block_[i * 4 + 1]} << 16) |
             (uint32_t{block_[i * 4 + 2]} << 8) | uint32_t{block_[i * 4 + 3]};
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f = 0, k = 0;
      if (i < 20) { f = (b & c) | (~b & d); k = 0x5A827999; }
      else if (i < 40) { f = b ^ c ^ d; k = 0x6ED9EBA1; }
      else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8F1BBCDC; }
      else { f = b ^ c ^ d; k = 0xCA62C1D6; }
      uint32_t t = rotl(a, 5) + f + e + k + w[i];
      e = d; d = c; c = rotl(b, 30); b = a; a = t;
    }
    h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d; h_[4] += e;
    fill_ = 0;
  }

  uint32_t h_[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  uint8_t block_[64] = {};
  uint32_t fill_ = 0;
  uint64_t length_ = 0;
};

}  // namespace spoor

#endif  // SPOOR_SHA1_H
