// A decoded event: one record, resolved against its stream, packet, clock
// and descriptor, with its field values typed.
#ifndef SPOOR_READER_EVENT_H
#define SPOOR_READER_EVENT_H

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "spoor/reader/guid.h"
#include "spoor/reader/model.h"

namespace spoor::reader {

struct Blob {
  std::span<const uint8_t> bytes;
};
struct Pointer {
  uint64_t address = 0;
};

// u8..u64 -> uint64_t; i8..i64 -> int64_t; f32, f64 -> double; bool; string
// -> std::string_view (UTF-8 as written, not validated); blob -> Blob;
// pointer -> Pointer; activity id -> Guid.
using Value = std::variant<uint64_t, int64_t, double, bool, std::string_view, Blob, Pointer, Guid>;

struct FieldValue {
  const FieldDescriptor* field = nullptr;  // its name and declared type
  Value value;
};

// Views point into the Trace: provider and descriptor are valid as long as
// it is; strings and blobs too, unless the Trace limits its expanded blocks
// (Trace::limit_expanded_bytes), and then until the reader's next next().
struct Event {
  int64_t time_ns = 0;   // CLOCK_MONOTONIC, through the trace's clock
  uint64_t ticks = 0;    // the raw, widened tick count
  uint32_t cpu = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t stream_id = 0;
  uint64_t packet_sequence = 0;
  uint64_t offset = 0;   // of the record in the file; of its COMPRESSED block if compressed
  const Provider* provider = nullptr;
  const EventDescriptor* descriptor = nullptr;
  std::optional<Guid> activity_id;
  std::optional<Guid> related_activity_id;
  std::vector<FieldValue> fields;  // in descriptor order

  // The value of the field called `name`, or nullptr.
  const Value* field(std::string_view name) const;
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_EVENT_H
