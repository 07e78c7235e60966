// ByteCursor: bounded little-endian reads over a byte range. Every read
// checks the bytes are there and leaves the cursor unmoved when they are
// not, so a parser can say exactly where and by how much it ran out.
#ifndef SPOOR_READER_BYTE_CURSOR_H
#define SPOOR_READER_BYTE_CURSOR_H

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace spoor::reader {

// The format is little-endian and the reader copies structs straight out of
// the file; a big-endian host would need byte swaps here and nowhere else.
static_assert(std::endian::native == std::endian::little,
              "the reader assumes a little-endian host");

class ByteCursor {
 public:
  ByteCursor(const uint8_t* begin, const uint8_t* end) : pos_(begin), end_(end) {}

  const uint8_t* pos() const { return pos_; }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }

  bool read(void* out, size_t n) {
    if (remaining() < n) return false;
    std::memcpy(out, pos_, n);
    pos_ += n;
    return true;
  }

  // A trivially copyable value or one of the format.h structs, which have
  // no padding (format.h asserts their sizes).
  template <class T>
  bool read(T& out) {
    static_assert(std::is_trivially_copyable_v<T>);
    return read(&out, sizeof(T));
  }

  bool skip(size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }

  // A uint16_t length and that many bytes (the format's metadata strings).
  bool read_string16(std::string& out) {
    uint16_t n = 0;
    const uint8_t* start = pos_;
    if (!read(n) || remaining() < n) {
      pos_ = start;
      return false;
    }
    out.assign(reinterpret_cast<const char*>(pos_), n);
    pos_ += n;
    return true;
  }

  enum class Uleb { kOk, kTruncated, kOverflow };
  // A ULEB128 of at most 64 bits.
  Uleb read_uleb128(uint64_t& out) {
    uint64_t value = 0;
    for (size_t i = 0; i < remaining(); ++i) {
      const uint8_t b = pos_[i];
      const unsigned shift = static_cast<unsigned>(7 * i);
      // The 10th byte may only carry the top bit of a 64-bit value.
      if (shift >= 64 || (shift == 63 && (b & 0x7E) != 0)) return Uleb::kOverflow;
      value |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        pos_ += i + 1;
        out = value;
        return Uleb::kOk;
      }
    }
    return Uleb::kTruncated;
  }

 private:
  const uint8_t* pos_;
  const uint8_t* end_;
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_BYTE_CURSOR_H
