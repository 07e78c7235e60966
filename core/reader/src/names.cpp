#include "spoor/reader/names.h"

#include "spoor/format.h"

namespace spoor::reader {

namespace fmt = spoor::format;

std::string opcode_name(uint8_t opcode) {
  switch (opcode) {
    case fmt::kOpInfo: return "info";
    case fmt::kOpStart: return "start";
    case fmt::kOpStop: return "stop";
    case fmt::kOpDcStart: return "dc_start";
    case fmt::kOpDcStop: return "dc_stop";
    case fmt::kOpExtension: return "extension";
    case fmt::kOpReply: return "reply";
    case fmt::kOpResume: return "resume";
    case fmt::kOpSuspend: return "suspend";
    case fmt::kOpSend: return "send";
    case fmt::kOpReceive: return "receive";
    default: return "opcode " + std::to_string(opcode);
  }
}

std::string level_name(uint8_t level) {
  static const char* const kNames[] = {"always", "critical", "error", "warning", "info", "verbose"};
  if (level < sizeof kNames / sizeof kNames[0]) return kNames[level];
  return "level " + std::to_string(level);
}

std::string field_type_name(uint8_t type) {
  static const char* const kNames[] = {nullptr, "u8",  "u16",  "u32",    "u64",    "i8",
                                       "i16",   "i32", "i64",  "f32",    "f64",    "bool",
                                       "string", "blob", "pointer", "activity_id"};
  if (type >= 1 && type <= fmt::kFieldTypeLast) return kNames[type];
  return "type " + std::to_string(type);
}

std::string block_type_name(uint16_t type) {
  switch (type) {
    case fmt::kBlockClock: return "CLOCK";
    case fmt::kBlockProcess: return "PROCESS";
    case fmt::kBlockStream: return "STREAM";
    case fmt::kBlockProvider: return "PROVIDER";
    case fmt::kBlockEvent: return "EVENT";
    case fmt::kBlockPacket: return "PACKET";
    case fmt::kBlockStreamEnd: return "STREAM_END";
    case fmt::kBlockCompressed: return "COMPRESSED";
    case fmt::kBlockSymbolMap: return "SYMBOL_MAP";
    default: return "type-" + std::to_string(type);
  }
}

std::string clock_source_name(uint32_t source) {
  switch (source) {
    case fmt::kClockMonotonicNs: return "CLOCK_MONOTONIC";
    case fmt::kClockTsc: return "TSC";
    case fmt::kClockCntvct: return "CNTVCT";
    case fmt::kClockHook: return "hook";
    default: return "source " + std::to_string(source);
  }
}

}  // namespace spoor::reader
