// The words a user reads for the numbers in a trace: opcodes, levels,
// field types, block types, clock sources.
#ifndef SPOOR_READER_NAMES_H
#define SPOOR_READER_NAMES_H

#include <cstdint>
#include <string>

namespace spoor::reader {

// "info", "start", "stop", "dc_start", ... ETW's names; "opcode 17" otherwise.
std::string opcode_name(uint8_t opcode);
// "always", "critical", "error", "warning", "info", "verbose"; "level 9" otherwise.
std::string level_name(uint8_t level);
// "u8" ... "activity_id"; "type 99" otherwise.
std::string field_type_name(uint8_t type);
// "CLOCK", "PACKET", ...; "type-12" otherwise.
std::string block_type_name(uint16_t type);
// "CLOCK_MONOTONIC", "TSC", "CNTVCT", "hook"; "source 7" otherwise.
std::string clock_source_name(uint32_t source);

}  // namespace spoor::reader

#endif  // SPOOR_READER_NAMES_H
