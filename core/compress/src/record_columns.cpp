// split_records / join_records: the record-columns layout (record_columns.h).
#include "record_columns.h"

#include <cstring>
#include <map>

#include "column_layout.h"
#include "spoor/format.h"

namespace spoor::compress {
namespace {

namespace fmt = spoor::format;

constexpr size_t kBlockHeader = sizeof(fmt::BlockHeader);
constexpr size_t kPacketHeader = sizeof(fmt::PacketBlock);
constexpr size_t kRecordHeader = fmt::kRecordHeaderSize;

// The groups' bytes go to plain vectors (insert is a memmove there), the
// columns to a PageBuffer (append_bytes: huge_pages.h says why).
void append(std::vector<uint8_t>& out, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + size);
}
void append(PageBuffer& out, const void* data, size_t size) { append_bytes(out, data, size); }

// The bodies of one key word's records.
struct Group : BodyShape {
  std::vector<uint8_t> bytes;  // split side: bodies back to back
  // join side: where the group starts in the packed bytes, and how many of
  // its records were rebuilt so far.
  uint64_t base = 0;
  uint64_t taken = 0;
};

// Writes `count` items of `width` bytes, byte plane by byte plane.
void append_planes(PageBuffer& out, const uint8_t* items, uint64_t count, uint32_t width) {
  const size_t start = out.size();
  out.resize(start + count * width);
  uint8_t* dst = out.data() + start;
  for (uint32_t plane = 0; plane < width; ++plane)
    for (uint64_t i = 0; i < count; ++i) *dst++ = items[i * width + plane];
}

}  // namespace

bool split_records(std::span<const uint8_t> blocks, PageBuffer& out, ColumnsInfo& info) {
  out.clear();
  std::vector<uint8_t> sizes, times;
  std::map<uint16_t, Group> groups;
  uint64_t previous_time = 0;
  uint64_t records = 0;
  size_t offset = 0;
  while (offset < blocks.size()) {
    if (blocks.size() - offset < kBlockHeader) return false;
    const uint8_t* at = blocks.data() + offset;
    fmt::BlockHeader h{};
    std::memcpy(&h, at, sizeof h);
    if (h.size > blocks.size() - offset - kBlockHeader) return false;
    const uint8_t* payload = at + kBlockHeader;
    if (h.type == fmt::kBlockPacket && h.size >= kPacketHeader) {
      fmt::PacketBlock packet{};
      std::memcpy(&packet, payload, sizeof packet);
      if (packet.data_size != h.size - kPacketHeader) return false;
      const uint8_t* record = payload + kPacketHeader;
      const uint8_t* end = record + packet.data_size;
      while (record < end) {
        if (end - record < static_cast<ptrdiff_t>(kRecordHeader)) return false;
        uint16_t size = 0;
        std::memcpy(&size, record, 2);
        // An odd first word is a short record (format 1.3, single-core writers):
        // the columns hold long records only, so the packer keeps this run as
        // blocks (layout 0).
        if (size < kRecordHeader || (size & 1) != 0 || size > end - record) return false;
        uint16_t key = 0;
        std::memcpy(&key, record + 2, 2);
        uint64_t time = 0;
        std::memcpy(&time, record + 4, kTimeBytes);
        const uint64_t delta = (time - previous_time) & fmt::kTimeMask48;
        previous_time = time;
        append(sizes, record, kSizeKeyBytes);
        append(times, &delta, kTimeBytes);
        Group& g = groups[key];
        g.note(size - kRecordHeader);
        append(g.bytes, record + kRecordHeader, size - kRecordHeader);
        record += size;
        ++records;
      }
      append(out, at, kBlockHeader + kPacketHeader);
    } else {
      append(out, at, kBlockHeader + h.size);
    }
    offset += kBlockHeader + h.size;
  }
  if (out.size() > UINT32_MAX || records > UINT32_MAX) return false;
  info.blocks_size = static_cast<uint32_t>(out.size());
  info.record_count = static_cast<uint32_t>(records);
  append(out, sizes.data(), sizes.size());
  append_planes(out, times.data(), records, kTimeBytes);
  for (const auto& [key, g] : groups) {
    if (g.planar()) append_planes(out, g.bytes.data(), g.count, g.width);
    else append(out, g.bytes.data(), g.bytes.size());
  }
  return true;
}

bool join_records(std::span<const uint8_t> packed, const ColumnsInfo& info, uint32_t raw_size,
                  ExpandedBytes& out, std::string& problem) {
  // No clear(): rebuild_block_section sizes `out` and writes every byte of
  // it, so a reused buffer is neither zero-filled nor faulted in again.
  const uint64_t n = info.record_count;
  const uint64_t sizes_at = info.blocks_size;
  const uint64_t times_at = sizes_at + n * kSizeKeyBytes;
  const uint64_t bodies_at = times_at + n * kTimeBytes;
  if (bodies_at > packed.size()) {
    problem = "its block section and the sizes and times of " + std::to_string(n) +
              " records need " + std::to_string(bodies_at) + " bytes but it expands to " +
              std::to_string(packed.size());
    return false;
  }
  const uint8_t* sizes = packed.data() + sizes_at;
  const uint8_t* times = packed.data() + times_at;

  // Group sizes come from the size column; groups lie in key order.
  std::map<uint16_t, Group> groups;
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t size = 0, key = 0;
    std::memcpy(&size, sizes + i * kSizeKeyBytes, 2);
    std::memcpy(&key, sizes + i * kSizeKeyBytes + 2, 2);
    if (size < kRecordHeader || (size & 1) != 0) {
      problem = "record " + std::to_string(i) + " has the invalid size " + std::to_string(size);
      return false;
    }
    groups[key].note(size - kRecordHeader);
  }
  uint64_t base = bodies_at;
  for (auto& [key, g] : groups) {
    g.base = base;
    base += g.total;
  }
  if (base != packed.size()) {
    problem = "its records' bodies take " + std::to_string(base - bodies_at) + " bytes but " +
              std::to_string(packed.size() - bodies_at) + " follow the times";
    return false;
  }

  uint64_t previous_time = 0;
  return rebuild_block_section(
      packed.data(), info.blocks_size, sizes, n, raw_size, out, problem, [](const fmt::PacketBlock&) {},
      [&](uint64_t next, uint16_t size, uint16_t key, uint8_t* at) {
        uint64_t delta = 0;
        for (size_t b = 0; b < kTimeBytes; ++b) delta |= uint64_t{times[b * n + next]} << (8 * b);
        previous_time = (previous_time + delta) & fmt::kTimeMask48;
        std::memcpy(at, sizes + next * kSizeKeyBytes, kSizeKeyBytes);
        std::memcpy(at + kSizeKeyBytes, &previous_time, kTimeBytes);
        at += kRecordHeader;
        Group& g = groups[key];
        const uint32_t body = size - kRecordHeader;
        if (g.planar()) {
          const uint8_t* column = packed.data() + g.base + g.taken;
          for (uint32_t b = 0; b < body; ++b) at[b] = column[b * g.count];
          g.taken += 1;
        } else {
          std::memcpy(at, packed.data() + g.base + g.taken, body);
          g.taken += body;
        }
        return true;
      });
}

}  // namespace spoor::compress
