// A 128-bit ID (provider GUID, activity ID) in RFC 4122 byte order, the way
// the file stores it, so its canonical text is the bytes in order.
#ifndef SPOOR_READER_GUID_H
#define SPOOR_READER_GUID_H

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spoor::reader {

struct Guid {
  std::array<uint8_t, 16> bytes{};

  bool is_zero() const;
  // "ce5fa4ea-ab00-5402-8b76-9f76ac858fb5" (lower case, 36 characters).
  std::string to_string() const;
  // The inverse of to_string (either case); nullopt if `text` is not one.
  static std::optional<Guid> parse(std::string_view text);

  friend auto operator<=>(const Guid&, const Guid&) = default;
};

struct GuidHash {
  size_t operator()(const Guid& g) const;
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_GUID_H
