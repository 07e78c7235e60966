// Events as text: one aligned line per event (`spoor dump`), CSV rows, and
// the value renderings both share.
#ifndef SPOOR_CLI_EVENT_TEXT_H
#define SPOOR_CLI_EVENT_TEXT_H

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "spoor/reader/event.h"
#include "spoor/reader/trace.h"

namespace spoor::cli {

// Lower-case hex, two digits a byte, no prefix.
std::string hex_bytes(std::span<const uint8_t> bytes);
// "0x1f"
std::string hex_number(uint64_t v);
// Strings quoted with C escapes (control bytes, quote, backslash); numbers
// in decimal (doubles in their shortest exact form); blobs in hex; pointers
// as 0x...; activity IDs in canonical form.
std::string value_text(const reader::Value& v);
// Fields that hold addresses though their type is a number or a blob:
// Spoor.Kernel's ip, address and start (u64), its callchains and
// Spoor.Stack's frames (blobs of u64). They print like pointers: 0x... and
// [0x...,0x...].
enum class AddressKind : uint8_t { none, address, address_list };
AddressKind address_kind(const reader::Event& e, const reader::FieldValue& f);
// "[0x1,0x2]": a blob of native-endian u64s (a trailing partial one is left out).
std::string address_list_text(std::span<const uint8_t> bytes);
// value_text, or the address rendering address_kind() asks for.
std::string field_text(const reader::Event& e, const reader::FieldValue& f);
// "name=value;name=value" with field_text values; a blob longer than
// blob_bytes (not an address list) shows its first blob_bytes in hex and
// its size: "7f454c46...(5410 bytes)".
std::string fields_text(const reader::Event& e, std::string_view separator, size_t blob_bytes = SIZE_MAX);
// The text dump's blob_bytes: a module's image or a sample's stack copy
// would otherwise fill screens (the jsonl and csv dumps keep every byte).
inline constexpr size_t kTextBlobBytes = 64;
// "1.234 ms": a duration in the largest unit that keeps it >= 1.
std::string duration_text(int64_t ns);

// The text dump: column widths fit the trace's provider and event names.
class TextLayout {
 public:
  TextLayout() = default;
  explicit TextLayout(const reader::Trace& trace);
  // Columns as wide as both layouts': a followed trace's providers and
  // events grow as processes describe theirs, and its lines stay aligned
  // with the header printed first.
  void widen_to(const TextLayout& other) {
    provider_width_ = std::max(provider_width_, other.provider_width_);
    event_width_ = std::max(event_width_, other.event_width_);
  }
  void header(std::string& out) const;
  void line(const reader::Event& e, std::string& out) const;

 private:
  size_t provider_width_ = 8;
  size_t event_width_ = 5;
};

void csv_header(std::string& out);
void csv_line(const reader::Event& e, std::string& out);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_EVENT_TEXT_H
