// 128-bit IDs: provider IDs and activity IDs.
#ifndef SPOOR_GUID_H
#define SPOOR_GUID_H

#include <stdint.h>

#include "spoor/sha1.h"

namespace spoor {

// Bytes in RFC 4122 order: the canonical text "ce5fa4ea-ab00-..." reads
// bytes[0], bytes[1], ... left to right.
struct Guid {
  uint8_t bytes[16] = {};

  constexpr bool operator==(const Guid&) const = default;
  constexpr bool is_zero() const {
    for (uint8_t b : bytes)
      if (b) return false;
    return true;
  }
};

// Activity IDs have the same shape as provider IDs.
using ActivityId = Guid;

namespace detail {
// Decodes one UTF-8 code point at name[i], advancing i. Malformed bytes
// decode as themselves so that hashing never fails.
constexpr uint32_t next_code_point(const char* name, uint32_t& i) {
  auto byte = [&](uint32_t k) { return static_cast<uint8_t>(name[k]); };
  uint8_t b0 = byte(i);
  if (b0 < 0x80) { i += 1; return b0; }
  if ((b0 & 0xE0) == 0xC0 && (byte(i + 1) & 0xC0) == 0x80) {
    uint32_t cp = ((b0 & 0x1Fu) << 6) | (byte(i + 1) & 0x3Fu);
    i += 2;
    return cp;
  }
  if ((b0 & 0xF0) == 0xE0 && (byte(i + 1) & 0xC0) == 0x80 && (byte(i + 2) & 0xC0) == 0x80) {
    uint32_t cp = ((b0 & 0x0Fu) << 12) | ((byte(i + 1) & 0x3Fu) << 6) | (byte(i + 2) & 0x3Fu);
    i += 3;
    return cp;
  }
  if ((b0 & 0xF8) == 0xF0 && (byte(i + 1) & 0xC0) == 0x80 && (byte(i + 2) & 0xC0) == 0x80 &&
      (byte(i + 3) & 0xC0) == 0x80) {
    uint32_t cp = ((b0 & 0x07u) << 18) | ((byte(i + 1) & 0x3Fu) << 12) |
                  ((byte(i + 2) & 0x3Fu) << 6) | (byte(i + 3) & 0x3Fu);
    i += 4;
    return cp;
  }
  i += 1;
  return b0;
}

constexpr void hash_utf16be(Sha1& sha, uint32_t unit) {
  sha.update(static_cast<uint8_t>(unit >> 8));
  sha.update(static_cast<uint8_t>(unit));
}
}  // namespace detail

// The provider ID ETW derives from a provider name (TraceLogging,
// EventSource): SHA-1 over a fixed namespace and the upper-cased name as
// UTF-16BE, 16 bytes of the digest with the version nibble set to 5, read as
// a Windows GUID. Only ASCII letters are upper-cased. constexpr, so a
// provider's ID is computed at compile time. Never fails.
// "MyCompany.MyComponent" -> ce5fa4ea-ab00-5402-8b76-9f76ac858fb5.
constexpr Guid provider_id_from_name(const char* name) {
  constexpr uint8_t kNamespace[16] = {0x48, 0x2C, 0x2D, 0xB2, 0xC3, 0x90, 0x47, 0xC8,
                                      0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB};
  Sha1 sha;
  for (uint8_t b : kNamespace) sha.update(b);
  for (uint32_t i = 0; name[i] != 0;) {
    uint32_t cp = detail::next_code_point(name, i);
    if (cp >= 'a' && cp <= 'z') cp -= 'a' - 'A';
    if (cp >= 0x10000) {
      cp -= 0x10000;
      detail::hash_utf16be(sha, 0xD800 + (cp >> 10));
      detail::hash_utf16be(sha, 0xDC00 + (cp & 0x3FF));
    } else {
      detail::hash_utf16be(sha, cp);
    }
  }
  uint8_t d[20] = {};
  sha.finish(d);
  d[7] = static_cast<uint8_t>((d[7] & 0x0F) | 0x50);
  // The digest is a Windows GUID in memory: Data1 (4 bytes), Data2 and Data3
  // (2 each) little-endian. RFC order stores them big-endian.
  Guid g;
  const uint8_t order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
  for (int k = 0; k < 16; ++k) g.bytes[k] = d[order[k]];
  return g;
}

}  // namespace spoor

#endif  // SPOOR_GUID_H
