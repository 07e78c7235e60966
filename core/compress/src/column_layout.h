// What the column layouts of COMPRESSED blocks (docs/FORMAT.md layouts 1
// and 2) share, writer and reader alike: the sizes of their columns, how a
// key word's bodies are measured, and the reader's walk over the block
// section (blocks and packet headers are stored as they were, records are
// rebuilt from columns).
#ifndef SPOOR_COMPRESS_COLUMN_LAYOUT_H
#define SPOOR_COMPRESS_COLUMN_LAYOUT_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "spoor/compress/huge_pages.h"
#include "spoor/format.h"

namespace spoor::compress {

// A record's (u16 size, u16 key word) in the size column.
inline constexpr size_t kSizeKeyBytes = 4;
// A record's 48-bit time: 6 bytes in its header (layout 1 stores its
// difference from the previous record in 6 byte planes).
inline constexpr size_t kTimeBytes = 6;
// Layout 2: the 8-byte words at body offsets 0, 8 .. 56 may be references,
// and a reference names its source column in one byte.
inline constexpr uint32_t kWordsChecked = 8;
inline constexpr size_t kMaxColumns = 255;

// Layout 4 keeps bodies wider than this in rows: byte planes pay for
// records of numeric fields; a kernel sample's 8 KiB stack copies, each
// its neighbour's bytes a few words apart, packed 10x larger in planes
// than in rows (bench/RESULTS.md).
inline constexpr uint32_t kMaxPlanarWidth = 256;

// Whether a key word's bodies are stored byte plane by byte plane: worth
// it only for several records of one multi-byte size (in layout 4, of at
// most kMaxPlanarWidth bytes: `wide_in_rows`). Writer and reader must
// agree, so both ask here.
inline bool planar_bodies(bool uniform, uint64_t count, uint32_t width, bool wide_in_rows) {
  return uniform && count > 1 && width > 1 && !(wide_in_rows && width > kMaxPlanarWidth);
}

// The bodies of one key word's records, as the readers measure them.
struct BodyShape {
  uint64_t count = 0;
  uint64_t total = 0;     // body bytes
  uint32_t width = 0;     // body size of the first record
  bool uniform = true;    // every body is `width` bytes
  bool wide_in_rows = false;  // layout 4 (planar_bodies)

  void note(uint32_t body) {
    if (count == 0) width = body;
    uniform = uniform && body == width;
    ++count;
    total += body;
  }
  bool planar() const { return planar_bodies(uniform, count, width, wide_in_rows); }
};

// Rebuilds `section_size` bytes of blocks from `section` into `out`, which
// must come to `raw_size` bytes and hold exactly `record_count` records.
// `size_keys` holds each record's (u16 size, u16 key) in order.
// on_packet(const format::PacketBlock&) is called before a packet's records;
// on_record(uint64_t index, uint16_t size, uint16_t key, uint8_t* at) writes
// record `index` (header and body, `size` bytes, room checked) at `at` and
// returns false, with `problem` set, when its columns are damaged. False,
// with `problem` naming the damage, when anything does not add up.
//
// `out` is sized once and written through a cursor: appending record by
// record (three small vector inserts each) took a sixth of the reader's
// time on heap traces.
template <typename OnPacket, typename OnRecord>
bool rebuild_block_section(const uint8_t* section, uint64_t section_size, const uint8_t* size_keys,
                           uint64_t record_count, uint32_t raw_size, ExpandedBytes& out,
                           std::string& problem, OnPacket&& on_packet, OnRecord&& on_record) {
  namespace fmt = spoor::format;
  constexpr size_t kBlockHeader = sizeof(fmt::BlockHeader);
  constexpr size_t kPacketHeader = sizeof(fmt::PacketBlock);
  out.resize(raw_size);
  uint8_t* at = out.data();
  const uint8_t* const end = at + raw_size;
  auto overflows = [&](uint64_t bytes) {
    if (bytes <= static_cast<uint64_t>(end - at)) return false;
    problem = "it expands to more than the " + std::to_string(raw_size) + " bytes of blocks its header declares";
    return true;
  };
  uint64_t next = 0;  // the next record of the columns
  uint64_t offset = 0;
  while (offset < section_size) {
    if (section_size - offset < kBlockHeader) {
      problem = "its block section ends inside a block header at byte " + std::to_string(offset);
      return false;
    }
    fmt::BlockHeader h{};
    std::memcpy(&h, section + offset, sizeof h);
    const bool packet = h.type == fmt::kBlockPacket && h.size >= kPacketHeader;
    const uint64_t kept = packet ? kPacketHeader : h.size;
    if (kept > section_size - offset - kBlockHeader) {
      problem = "its block section ends inside the block at byte " + std::to_string(offset);
      return false;
    }
    if (overflows(kBlockHeader + kept)) return false;
    std::memcpy(at, section + offset, kBlockHeader + kept);
    at += kBlockHeader + kept;
    offset += kBlockHeader + kept;
    if (!packet) continue;
    fmt::PacketBlock header{};
    std::memcpy(&header, section + offset - kPacketHeader, sizeof header);
    if (header.data_size != h.size - kPacketHeader) {
      problem = "a packet header declares " + std::to_string(header.data_size) +
                " bytes of records in a block of " + std::to_string(h.size);
      return false;
    }
    on_packet(header);
    uint64_t left = header.data_size;
    while (left > 0) {
      if (next == record_count) {
        problem = "its packets hold more records than its " + std::to_string(record_count);
        return false;
      }
      uint16_t size = 0, key = 0;
      std::memcpy(&size, size_keys + next * kSizeKeyBytes, 2);
      std::memcpy(&key, size_keys + next * kSizeKeyBytes + 2, 2);
      if (size > left) {
        problem = "record " + std::to_string(next) + " (" + std::to_string(size) +
                  " bytes) runs past its packet's end";
        return false;
      }
      if (overflows(size) || !on_record(next, size, key, at)) return false;
      at += size;
      left -= size;
      ++next;
    }
  }
  if (next != record_count) {
    problem = "its columns hold " + std::to_string(record_count) + " records but its packets take " +
              std::to_string(next);
    return false;
  }
  if (at != end) {
    problem = "it expands to " + std::to_string(at - out.data()) + " bytes of blocks, not the " +
              std::to_string(raw_size) + " its header declares";
    return false;
  }
  return true;
}

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_COLUMN_LAYOUT_H
