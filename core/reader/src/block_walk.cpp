// The block walk: file header, then every block in file order. Each block is
// checked in the order docs/FORMAT.md gives (sync word, size against the end
// of the file, CRC-32C, then its own layout); the first one that fails is
// recorded as the trace's damage and nothing after it is used. A COMPRESSED
// block, once its own checks pass, has its block section read (the blocks
// it holds, packets cut to their headers) and walked the same way, in
// place; its records are rebuilt only when a reader needs them
// (expansion.cpp), and its packets' CRCs are checked then.
#include <algorithm>
#include <cstring>

#include "byte_cursor.h"
#include "metadata_blocks.h"
#include "spoor/compress/packed_blocks.h"
#include "spoor/crc32c.h"
#include "spoor/format.h"
#include "spoor/reader/names.h"
#include "text.h"
#include "trace_data.h"

namespace spoor::reader {
namespace {

namespace fmt = spoor::format;

// The blocks being walked: the file's, or the block section of one
// COMPRESSED block (then offsets count from the start of what the block
// expands to, and what is found there is placed at the COMPRESSED block's
// offset). A section of layout 1 or 2 holds each PACKET block's header
// only: its records are rebuilt when a reader gets to them.
struct Region {
  std::span<const uint8_t> bytes;
  std::optional<uint64_t> container;  // file offset of the COMPRESSED block
  uint32_t index = kNoContainer;      // its place in Trace::Data::containers
  bool packets_cut = false;

  uint64_t place(uint64_t offset) const { return container ? *container : offset; }
  void damage(Trace::Data& d, uint64_t offset, std::string message) const {
    if (container)
      message = "inside the COMPRESSED block at byte " + num(*container) +
                " (offsets count from the start of the blocks it expands to): " + message;
    d.damage = Damage{place(offset), std::move(message), std::nullopt};
  }
};

// How far one block took the walk: in the region's bytes, and in the
// blocks they stand for (the same but for a cut PACKET block). Zero after
// damage.
struct Step {
  uint64_t in_region = 0;
  uint64_t expanded = 0;
};

// "stream 3, cpu 1" for blocks of one stream, read from as much of the
// payload as the file holds; empty for other blocks.
std::string block_context(uint16_t type, const uint8_t* payload, uint64_t available) {
  uint32_t words[2] = {0, 0};
  if (type == fmt::kBlockPacket && available >= 8) {
    std::memcpy(words, payload, 8);  // PacketBlock: stream_id, cpu
    return "stream " + num(words[0]) + ", cpu " + num(words[1]);
  }
  if (type == fmt::kBlockSymbolMap && available >= 4) {
    std::memcpy(words, payload, 4);  // SymbolMapBlock: pid
    return "pid " + num(words[0]);
  }
  if (type == fmt::kBlockStreamEnd && available >= 4) {
    std::memcpy(words, payload, 4);  // StreamEndBlock: stream_id
    return "stream " + num(words[0]);
  }
  return "";
}

std::optional<Error> check_header(Trace::Data& d) {
  const auto bytes = d.bytes;
  const size_t magic_len = sizeof fmt::kFileMagic;
  if (bytes.empty()) return Error{"the file is empty"};
  // A prefix of the magic is a cut-off trace, reported as too short below.
  if (std::memcmp(bytes.data(), fmt::kFileMagic, std::min(bytes.size(), magic_len)) != 0)
    return Error{"not a Spoor trace (it does not start with \"SPOORTRC\")"};
  if (bytes.size() < sizeof(fmt::FileHeader))
    return Error{"the file is " + num(bytes.size()) +
                 " bytes, too short for the 32-byte trace header"};
  fmt::FileHeader h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  d.version_major = h.version_major;
  d.version_minor = h.version_minor;
  if (h.version_major != fmt::kVersionMajor)
    return Error{"it is format version " + num(h.version_major) + "." + num(h.version_minor) +
                 "; this spoor reads version " + num(fmt::kVersionMajor) + ".x"};
  if (h.header_size < sizeof(fmt::FileHeader) || h.header_size > bytes.size())
    return Error{"its header size " + num(h.header_size) + " is invalid (32 to " +
                 num(bytes.size()) + " bytes)"};
  return std::nullopt;
}

PacketPlace packet_place(const Region& region, uint64_t offset, uint32_t size) {
  PacketPlace p;
  p.offset = region.place(offset);
  p.data_offset = offset + sizeof(fmt::BlockHeader);
  if (region.container) {
    p.container = region.index;
    p.records_at = offset + sizeof(fmt::BlockHeader) + sizeof(fmt::PacketBlock);
    p.records_size = size >= sizeof(fmt::PacketBlock) ? size - sizeof(fmt::PacketBlock) : 0;
  }
  return p;
}

Problem parse_payload(Trace::Data& d, uint16_t type, std::span<const uint8_t> payload,
                      const Region& region, uint64_t offset, uint64_t& unknown) {
  const uint64_t place = region.place(offset);
  switch (type) {
    case fmt::kBlockClock: return parse_clock(d, payload, place);
    case fmt::kBlockProcess: return parse_process(d, payload, place);
    case fmt::kBlockStream: return parse_stream(d, payload, place);
    case fmt::kBlockProvider: return parse_provider(d, payload, place);
    case fmt::kBlockEvent: return parse_event(d, payload, place);
    case fmt::kBlockPacket:
      return parse_packet(d, payload, packet_place(region, offset, static_cast<uint32_t>(payload.size())));
    case fmt::kBlockStreamEnd: return parse_stream_end(d, payload, place);
    case fmt::kBlockSymbolMap: return parse_symbol_map(d, payload, place);
    default:
      ++unknown;  // a later minor version's block: its size is known, skip it
      return std::nullopt;
  }
}

uint64_t walk_all(Trace::Data& d, const Region& region, uint64_t start, uint64_t& unknown);

// Records the COMPRESSED block at `offset` and walks the blocks its
// section holds.
void walk_section(Trace::Data& d, const compress::BlockSection& section, std::span<const uint8_t> payload,
                  uint64_t offset, uint64_t& unknown) {
  const auto index = static_cast<uint32_t>(d.containers.size());
  d.containers.push_back(Trace::Data::Container{payload, offset, section.raw_size, {}});
  d.compression.blocks++;
  d.compression.stored_bytes += sizeof(fmt::BlockHeader) + payload.size();
  d.compression.raw_bytes += section.raw_size;
  const Region region{section.bytes, offset, index, section.packets_cut};
  const uint64_t end = walk_all(d, region, 0, unknown);
  if (!d.damage && end != section.raw_size)
    region.damage(d, end, "its blocks come to " + num(end) + " bytes, its header says it expands to " +
                              num(section.raw_size));
}

// Reads the block section of the COMPRESSED block at `offset` and walks the
// blocks it holds. Returns what is wrong with the block itself, if
// anything; damage among the blocks it holds is recorded in d.damage.
Problem expand(Trace::Data& d, std::span<const uint8_t> payload, uint64_t offset, uint64_t& unknown) {
  compress::BlockSection section;
  section.bytes = std::move(d.expansions.scratch_section);  // reused block to block
  std::string problem;
  const bool read = compress::unpack_block_section(payload, section, problem);
  if (read) walk_section(d, section, payload, offset, unknown);
  d.expansions.scratch_section = std::move(section.bytes);
  return read ? Problem{} : Problem{problem};
}

// Checks and parses the block at `at` in the region (`offset` in the blocks
// it stands for); returns how far it took the walk, or zeros after
// recording the damage.
Step walk_one(Trace::Data& d, const Region& region, uint64_t at, uint64_t offset, uint64_t& unknown) {
  const uint64_t region_size = region.bytes.size();
  const uint64_t size = offset + (region_size - at);  // where the region ends, as an offset
  const uint8_t* p = region.bytes.data() + at;
  if (region_size - at < sizeof(fmt::BlockHeader)) {
    region.damage(d, offset, "truncated at byte " + num(size) + " inside the header of the block at byte " +
                          num(offset) + " (" + num(size - offset) + " of 16 bytes)");
    return {};
  }
  fmt::BlockHeader h{};
  std::memcpy(&h, p, sizeof h);
  if (h.magic != fmt::kBlockMagic) {
    region.damage(d, offset, "no block starts at byte " + num(offset) + ": found " + hex(h.magic, 8) +
                          " where the sync word " + hex(fmt::kBlockMagic, 8) + " should be");
    return {};
  }
  const std::string type = block_type_name(h.type);
  const uint8_t* payload = p + sizeof h;
  const uint64_t available = region_size - at - sizeof h;
  const std::string context = block_context(h.type, payload, available);
  const std::string paren = context.empty() ? "" : " (" + context + ")";
  if (h.size > fmt::kMaxBlockPayload) {
    region.damage(d, offset, "the " + type + " block at byte " + num(offset) + paren + " claims a " +
                          num(h.size) + "-byte payload, over the 64 MiB limit");
    return {};
  }
  const uint64_t total = sizeof h + uint64_t{h.size};
  // A cut PACKET block: its header is here, its CRC is checked when the
  // reader expands the block for its records.
  const bool cut = region.packets_cut && h.type == fmt::kBlockPacket && h.size >= sizeof(fmt::PacketBlock);
  const uint64_t here = cut ? sizeof(fmt::PacketBlock) : h.size;
  if (here > available) {
    region.damage(d, offset, "truncated at byte " + num(size) + " inside a " + type + " block of " +
                          num(total) + " bytes starting at byte " + num(offset) + paren);
    return {};
  }
  if (!cut) {
    const uint32_t crc = spoor::block_checksum(&h, payload, h.size);
    if (crc != h.crc32c) {
      region.damage(d, offset, "CRC mismatch in block at byte " + num(offset) + " (" + type +
                            (context.empty() ? "" : ", " + context) +
                            "): it stores " + hex(h.crc32c, 8) + ", its payload gives " +
                            hex(crc, 8));
      return {};
    }
  }
  Problem problem;
  if (h.type == fmt::kBlockCompressed && region.container)
    problem = "a COMPRESSED block cannot hold another";
  else if (h.type == fmt::kBlockCompressed)
    problem = expand(d, {payload, h.size}, offset, unknown);
  else if (cut)
    problem = parse_packet(d, {payload, here}, packet_place(region, offset, h.size));
  else
    problem = parse_payload(d, h.type, {payload, h.size}, region, offset, unknown);
  if (d.damage) return {};  // inside the COMPRESSED block
  if (problem) {
    region.damage(d, offset, "bad " + type + " block at byte " + num(offset) + ": " + *problem);
    return {};
  }
  return {sizeof h + here, total};
}

// Walks the blocks of `region` from `start` until its end or the first
// damage; returns the offset reached in the blocks it stands for.
uint64_t walk_all(Trace::Data& d, const Region& region, uint64_t start, uint64_t& unknown) {
  uint64_t at = start;
  uint64_t offset = start;
  while (at < region.bytes.size()) {
    const Step step = walk_one(d, region, at, offset, unknown);
    if (step.in_region == 0) break;
    at += step.in_region;
    offset += step.expanded;
  }
  return offset;
}

}  // namespace

std::optional<Error> walk_blocks(Trace::Data& d) {
  if (auto error = check_header(d)) return error;
  fmt::FileHeader h{};
  std::memcpy(&h, d.bytes.data(), sizeof h);
  uint64_t unknown = 0;
  walk_all(d, Region{d.bytes, std::nullopt}, h.header_size, unknown);
  // Packets arrive in drain order; a stream reads them in sequence order.
  for (Stream& s : d.streams)
    std::stable_sort(s.packets.begin(), s.packets.end(),
                     [](const Packet& a, const Packet& b) { return a.sequence < b.sequence; });
  if (unknown > 0)
    d.warnings.push_back(num(unknown) + " block(s) of types this reader does not know were skipped");
  if (!d.has_clock)
    d.warnings.push_back("the trace has no valid CLOCK block; times are raw ticks");
  for (const Stream& s : d.streams)
    if (!d.process_by_pid.contains(s.pid))
      d.warnings.push_back("stream " + num(s.id) + " belongs to pid " + num(s.pid) +
                           ", which has no PROCESS block; pointer fields are read as 8 bytes");
  return std::nullopt;
}

}  // namespace spoor::reader
