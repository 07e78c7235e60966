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
// `data_offset` is where the payload starts in the file; `compressed`: the
// payload is in expanded bytes of the COMPRESSED block at `offset`.
Problem parse_packet(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset,
                     uint64_t data_offset, bool compressed);
Problem parse_stream_end(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset);

}  // namespace spoor::reader

#endif  // SPOOR_READER_METADATA_BLOCKS_H
