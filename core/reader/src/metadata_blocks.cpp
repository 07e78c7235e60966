// Payload parsers for CLOCK, PROCESS, STREAM, PROVIDER, EVENT, PACKET,
// STREAM_END and SYMBOL_MAP. The layouts are format.h's structs, copied out of the payload
// (the file gives no alignment promise), followed by the variable parts.
#include "metadata_blocks.h"

#include "byte_cursor.h"
#include "spoor/format.h"
#include "spoor/reader/names.h"
#include "text.h"

namespace spoor::reader {
namespace {

namespace fmt = spoor::format;

ByteCursor cursor(std::span<const uint8_t> payload) {
  return ByteCursor(payload.data(), payload.data() + payload.size());
}

std::string too_short(size_t have, const char* what) {
  return "its " + num(have) + "-byte payload is too short for " + what;
}

// The parser must land exactly on the payload's end: bytes left over mean
// writer and reader disagree about the layout.
Problem leftover(const ByteCursor& c) {
  if (c.remaining() == 0) return std::nullopt;
  return num(c.remaining()) + " bytes are left over after its contents";
}

}  // namespace

Problem parse_clock(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset) {
  ByteCursor c = cursor(payload);
  fmt::ClockBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 40-byte clock");
  if (auto p = leftover(c)) return p;
  // An invalid CLOCK is not damage: the file can still be read with another
  // clock (or with raw ticks), so it is skipped with a warning.
  if (b.freq_millihz == 0) {
    d.warnings.push_back("CLOCK block at byte " + num(offset) +
                         " has a frequency of 0 and was ignored");
    return std::nullopt;
  }
  d.clock = Clock{b.source, b.freq_millihz, b.tick_ref, b.monotonic_ns_ref, b.realtime_ns_ref,
                  offset, b.time_grain_ticks > 1 ? b.time_grain_ticks : 1};
  d.has_clock = true;
  return std::nullopt;
}

Problem parse_process(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset) {
  ByteCursor c = cursor(payload);
  fmt::ProcessBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 16-byte process header");
  if (b.pointer_size != 4 && b.pointer_size != 8)
    return "process " + num(b.pid) + " has pointer size " + num(b.pointer_size) +
           " (only 4 and 8 are valid)";
  Process p;
  p.pid = b.pid;
  p.ppid = b.ppid;
  p.pointer_size = b.pointer_size;
  p.offset = offset;
  std::string cmdline;
  if (!c.read_string16(p.name)) return "the process name runs past the block's end";
  if (!c.read_string16(cmdline)) return "the command line runs past the block's end";
  if (auto problem = leftover(c)) return problem;
  size_t start = 0;
  while (start < cmdline.size()) {
    size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    p.arguments.push_back(cmdline.substr(start, end - start));
    start = end + 1;
  }
  d.process_blocks.push_back(p);
  // A pid seen again (a re-announced process) replaces the earlier entry.
  auto it = d.process_by_pid.find(p.pid);
  if (it != d.process_by_pid.end()) {
    d.processes[it->second] = std::move(p);
  } else {
    d.process_by_pid.emplace(p.pid, d.processes.size());
    d.processes.push_back(std::move(p));
  }
  return std::nullopt;
}

Problem parse_stream(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset) {
  ByteCursor c = cursor(payload);
  fmt::StreamBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 16-byte stream");
  if (auto p = leftover(c)) return p;
  if (auto it = d.stream_by_id.find(b.stream_id); it != d.stream_by_id.end())
    return "stream id " + num(b.stream_id) + " was already used by the STREAM block at byte " +
           num(d.streams[it->second].offset);
  Stream s;
  s.id = b.stream_id;
  s.pid = b.pid;
  s.cpu = b.cpu;
  s.offset = offset;
  d.stream_by_id.emplace(s.id, d.streams.size());
  d.streams.push_back(std::move(s));
  return std::nullopt;
}

Problem parse_provider(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset) {
  ByteCursor c = cursor(payload);
  fmt::ProviderBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 24-byte provider header");
  Provider p;
  p.pid = b.pid;
  p.index = b.provider_index;
  for (size_t i = 0; i < 16; ++i) p.guid.bytes[i] = b.guid[i];
  p.offset = offset;
  if (!c.read_string16(p.name)) return "the provider name runs past the block's end";
  if (auto problem = leftover(c)) return problem;
  d.providers.push_back(std::move(p));
  d.provider_by_key[process_key(b.pid, b.provider_index)] = &d.providers.back();
  return std::nullopt;
}

Problem parse_event(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset) {
  ByteCursor c = cursor(payload);
  fmt::EventBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 32-byte event header");
  EventDescriptor e;
  e.pid = b.pid;
  e.key = b.event_key;
  e.id = b.id;
  e.version = b.version;
  e.level = b.level;
  e.opcode = b.opcode;
  e.task = b.task;
  e.keywords = b.keywords;
  e.offset = offset;
  if (!c.read_string16(e.name)) return "the event name runs past the block's end";
  const std::string what = "event '" + e.name + "' of pid " + num(e.pid);
  if (e.key == 0 || e.key > fmt::kMaxEventKey)
    return what + " has key " + num(e.key) + ", outside 1.." + num(fmt::kMaxEventKey);
  auto provider = d.provider_by_key.find(process_key(b.pid, b.provider_index));
  if (provider == d.provider_by_key.end())
    return what + " names provider index " + num(b.provider_index) +
           ", which no PROVIDER block before it defines";
  e.provider = provider->second;
  e.fields.reserve(b.field_count);
  for (uint16_t i = 0; i < b.field_count; ++i) {
    FieldDescriptor f;
    if (!c.read(f.type) || !c.read_string16(f.name))
      return what + ": field " + num(i) + " of " + num(b.field_count) +
             " runs past the block's end";
    if (f.type == 0 || f.type > fmt::kFieldTypeLast)
      return what + ": field '" + f.name + "' has unknown type " + num(f.type) +
             " (format " + num(fmt::kVersionMajor) + "." + num(fmt::kVersionMinor) +
             " knows types 1.." + num(fmt::kFieldTypeLast) + ")";
    e.fields.push_back(std::move(f));
  }
  if (auto problem = leftover(c)) return problem;
  const uint64_t key = process_key(e.pid, e.key);
  if (auto old = d.event_by_key.find(key); old != d.event_by_key.end())
    d.warnings.push_back("EVENT block at byte " + num(offset) + " redefines key " + num(e.key) +
                         " of pid " + num(e.pid) + " (first defined at byte " +
                         num(old->second->offset) + "); the later one is used");
  d.events.push_back(std::move(e));
  d.event_by_key[key] = &d.events.back();
  return std::nullopt;
}

Problem parse_packet(Trace::Data& d, std::span<const uint8_t> payload, const PacketPlace& place) {
  ByteCursor c = cursor(payload);
  fmt::PacketBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 48-byte packet header");
  const bool compressed = place.container != kNoContainer;
  const uint64_t follow = compressed ? place.records_size : c.remaining();
  if (b.data_size != follow)
    return "its header declares " + num(b.data_size) + " bytes of records but " +
           num(follow) + " follow it (stream " + num(b.stream_id) + ", packet " +
           num(b.sequence) + ")";
  auto it = d.stream_by_id.find(b.stream_id);
  if (it == d.stream_by_id.end())
    return "packet " + num(b.sequence) + " belongs to stream " + num(b.stream_id) +
           ", which no STREAM block before it defines";
  Packet p;
  p.stream_id = b.stream_id;
  p.cpu = b.cpu;
  p.sequence = b.sequence;
  p.begin_ticks = b.begin_ticks;
  p.end_ticks = b.end_ticks;
  p.lost_total = b.lost_total;
  p.record_count = b.record_count;
  p.data_size = b.data_size;
  p.offset = place.offset;
  p.data_offset = compressed ? place.offset : place.data_offset + sizeof(fmt::PacketBlock);
  p.records = compressed ? nullptr : payload.data() + sizeof(fmt::PacketBlock);
  p.container = place.container;
  p.records_at = static_cast<uint32_t>(place.records_at);
  d.streams[it->second].packets.push_back(p);
  return std::nullopt;
}

Problem parse_stream_end(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset) {
  ByteCursor c = cursor(payload);
  fmt::StreamEndBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 32-byte stream end");
  if (auto p = leftover(c)) return p;
  auto it = d.stream_by_id.find(b.stream_id);
  if (it == d.stream_by_id.end())
    return "it ends stream " + num(b.stream_id) + ", which no STREAM block before it defines";
  d.streams[it->second].end = StreamEnd{b.lost_total, b.abandoned_bytes, b.packets, offset};
  return std::nullopt;
}

// A piece at offset 0 starts the pid's map afresh (the pid was reused);
// a later piece must follow the text so far. Its text is copied: the
// block may sit in an expansion that goes before the reading ends.
Problem parse_symbol_map(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset) {
  ByteCursor c = cursor(payload);
  fmt::SymbolMapBlock b{};
  if (!c.read(b)) return too_short(payload.size(), "the 16-byte symbol map header");
  std::string path(b.path_size, '\0');
  if (!c.read(path.data(), path.size())) return "its " + num(b.path_size) + "-byte path runs past the block's end";
  const std::string_view text(reinterpret_cast<const char*>(c.pos()), c.remaining());
  auto it = d.symbol_map_by_pid.find(b.pid);
  if (b.offset == 0) {
    SymbolMap m{b.pid, b.kind, std::move(path), std::string(text), offset};
    if (it != d.symbol_map_by_pid.end()) {
      d.symbol_maps[it->second] = std::move(m);
    } else {
      d.symbol_map_by_pid.emplace(b.pid, d.symbol_maps.size());
      d.symbol_maps.push_back(std::move(m));
    }
    return std::nullopt;
  }
  if (it == d.symbol_map_by_pid.end() || d.symbol_maps[it->second].text.size() != b.offset) {
    const uint64_t have = it == d.symbol_map_by_pid.end() ? 0 : d.symbol_maps[it->second].text.size();
    d.warnings.push_back("SYMBOL_MAP block at byte " + num(offset) + " (pid " + num(b.pid) + ") holds bytes " +
                         num(b.offset) + " on of a map read up to byte " + num(have) + " so far; it was ignored");
    return std::nullopt;
  }
  d.symbol_maps[it->second].text.append(text);
  return std::nullopt;
}

}  // namespace spoor::reader
