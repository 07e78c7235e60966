// Parsers for the payload of each block type. Each checks the payload holds
// exactly its layout (no byte short, none left over), then records what it
// describes in Trace::Data.
#ifndef SPOOR_READER_METADATA_BLOCKS_H
#define SPOOR_READER_METADATA_BLOCKS_H

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "trace_data.h"

namespace spoor::reader {

// What is wrong with a block's payload; nullopt when it is fine.
using Problem = std::optional<std::string>;

// `offset` is the block's position in the file, kept in what is recorded.
Problem parse_clock(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);
Problem parse_process(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);
Problem parse_stream(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);
Problem parse_provider(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);
Problem parse_event(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);
// Where a PACKET block is. A packet in a COMPRESSED block (`container` set)
// may be its 48-byte header alone (compress::BlockSection): `records_size`
// says how many bytes of records the whole block holds.
struct PacketPlace {
  uint64_t offset = 0;       // of the block; of its COMPRESSED block if in one
  uint64_t data_offset = 0;  // of its payload in the file (not compressed)
  uint32_t container = kNoContainer;
  uint64_t records_at = 0;   // in the container's expanded bytes
  uint64_t records_size = 0;
};
Problem parse_packet(Trace::Data& d, std::span<const uint8_t> payload, const PacketPlace& place);
Problem parse_stream_end(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);
Problem parse_symbol_map(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);

}  // namespace spoor::reader

#endif  // SPOOR_READER_METADATA_BLOCKS_H
