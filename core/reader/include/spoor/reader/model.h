// What a trace file describes, as the reader found it: the clock, processes,
// streams with their packets, providers and event descriptors, and where the
// file stops making sense (Damage). Names follow docs/FORMAT.md.
#ifndef SPOOR_READER_MODEL_H
#define SPOOR_READER_MODEL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spoor/format.h"
#include "spoor/reader/guid.h"

namespace spoor::reader {

// Where a file (or one stream of it) stops being readable. `offset` is the
// byte in the file where the damage starts: the bad block's first byte, or
// the bad record's first byte. `message` says what is wrong there, naming
// the block type, stream and packet when known.
struct Damage {
  uint64_t offset = 0;
  std::string message;
  std::optional<uint32_t> stream_id;  // set when the damage is inside one stream
};

// The tick-to-nanosecond conversion of a CLOCK block:
//   ns = monotonic_ns_ref + (ticks - tick_ref) * 10^12 / freq_millihz
struct Clock {
  uint32_t source = format::kClockMonotonicNs;  // format::ClockSource
  uint64_t freq_millihz = 1'000'000'000'000ull;  // 1 GHz: ticks are ns
  uint64_t tick_ref = 0;
  int64_t monotonic_ns_ref = 0;
  int64_t realtime_ns_ref = 0;
  uint64_t offset = 0;  // of the CLOCK block used; 0 when the file has none
  // The writers rounded record times down to multiples of this many ticks
  // (format 1.7's time_grain_ticks); 1 when they kept every tick.
  uint32_t time_grain_ticks = 1;

  // CLOCK_MONOTONIC ns of a tick reading; ticks before tick_ref give earlier
  // times. Saturates at the int64_t range instead of wrapping.
  int64_t to_ns(uint64_t ticks) const;
};

struct Process {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t pointer_size = 8;  // 4 or 8: the width of pointer fields
  std::string name;
  std::vector<std::string> arguments;  // the command line split at its NULs
  uint64_t offset = 0;
};

// A symbol map kept in the trace (SYMBOL_MAP blocks): a JIT's perf map,
// whole, its pieces joined.
struct SymbolMap {
  uint32_t pid = 0;
  uint16_t kind = 0;    // format::SymbolMapKind
  std::string path;     // where the recorder read it
  std::string text;
  uint64_t offset = 0;  // of its first block
};

struct Provider {
  uint32_t pid = 0;
  uint16_t index = 0;  // what EVENT blocks of this process refer to
  Guid guid;
  std::string name;
  uint64_t offset = 0;
};

struct FieldDescriptor {
  uint8_t type = 0;  // format::FieldType
  std::string name;
};

// The self-description of one event of one process (an EVENT block).
struct EventDescriptor {
  uint32_t pid = 0;
  uint16_t key = 0;  // what its records carry
  const Provider* provider = nullptr;  // never null in a Trace
  uint16_t id = 0;
  uint8_t version = 0;
  uint8_t level = 0;   // 0 always .. 5 verbose
  uint8_t opcode = 0;  // format::Opcode
  uint16_t task = 0;
  uint64_t keywords = 0;
  std::string name;
  std::vector<FieldDescriptor> fields;
  uint64_t offset = 0;
};

inline constexpr uint32_t kNoContainer = 0xFFFFFFFFu;

// A PACKET block's header, and where its records are. A packet that came
// out of a COMPRESSED block has no place of its own in the file: `offset`
// and `data_offset` are then the COMPRESSED block's, `records` is null, and
// its records are at `records_at` in what that block (the Trace's
// `container`-th) expands to, which the reader expands when it needs them.
struct Packet {
  uint32_t stream_id = 0;
  uint32_t cpu = 0;
  uint64_t sequence = 0;
  uint64_t begin_ticks = 0;
  uint64_t end_ticks = 0;
  uint64_t lost_total = 0;  // running count of events dropped on the stream
  uint32_t record_count = 0;
  uint32_t data_size = 0;
  uint64_t offset = 0;       // of the block header
  uint64_t data_offset = 0;  // of the first record
  const uint8_t* records = nullptr;  // data_size bytes in the file (not compressed)
  uint32_t container = kNoContainer;  // which COMPRESSED block, counted from 0 in file order
  uint32_t records_at = 0;            // offset of its records in that block's expanded bytes

  // It came out of a COMPRESSED block.
  bool compressed() const { return container != kNoContainer; }
};

// What COMPRESSED blocks did to the file.
struct CompressionSummary {
  uint64_t blocks = 0;        // COMPRESSED blocks read
  uint64_t stored_bytes = 0;  // their size in the file, block headers included
  uint64_t raw_bytes = 0;     // the blocks they expanded to
};

struct StreamEnd {
  uint64_t lost_total = 0;
  uint64_t abandoned_bytes = 0;
  uint64_t packets = 0;
  uint64_t offset = 0;
};

// One stream: the packets of one process on one CPU.
struct Stream {
  uint32_t id = 0;
  uint32_t pid = 0;
  uint32_t cpu = 0;
  uint64_t offset = 0;
  std::vector<Packet> packets;   // sorted by sequence (file order among equals)
  std::optional<StreamEnd> end;  // its STREAM_END block, if the file has one
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_MODEL_H
