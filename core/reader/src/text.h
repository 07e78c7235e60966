// Small formatting helpers for the reader's messages.
#ifndef SPOOR_READER_TEXT_H
#define SPOOR_READER_TEXT_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace spoor::reader {

// "0x0000abcd" with `digits` hex digits (at least).
inline std::string hex(uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

inline std::string num(uint64_t v) { return std::to_string(v); }

}  // namespace spoor::reader

#endif  // SPOOR_READER_TEXT_H
