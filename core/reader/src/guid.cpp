#include "spoor/reader/guid.h"

#include <cstring>

namespace spoor::reader {

bool Guid::is_zero() const {
  for (uint8_t b : bytes)
    if (b != 0) return false;
  return true;
}

std::string Guid::to_string() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[bytes[i] >> 4]);
    s.push_back(kHex[bytes[i] & 15]);
  }
  return s;
}

std::optional<Guid> Guid::parse(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Guid g;
  size_t pos = 0;
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      if (text[pos] != '-') return std::nullopt;
      ++pos;
    }
    const int hi = nibble(text[pos]), lo = nibble(text[pos + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    g.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
    pos += 2;
  }
  return g;
}

size_t GuidHash::operator()(const Guid& g) const {
  uint64_t a, b;
  std::memcpy(&a, g.bytes.data(), 8);
  std::memcpy(&b, g.bytes.data() + 8, 8);
  return static_cast<size_t>(a * 0x9E3779B97F4A7C15ull ^ b);
}

}  // namespace spoor::reader
