// A test-only trace writer: file headers, blocks with correct CRCs, packets
// of hand-encoded records. It writes exactly what it is told (including
// wrong sizes and bad bytes on request), so tests can build both good
// traces and every kind of damage. Not the real writer (core/src).
#ifndef SPOOR_TESTS_TRACE_BUILDER_H
#define SPOOR_TESTS_TRACE_BUILDER_H

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spoor/format.h"

namespace spoor::testing {

using Bytes = std::vector<uint8_t>;
using Guid16 = std::array<uint8_t, 16>;

// A GUID whose 16 bytes are seed, seed+1, ... (distinct per seed).
Guid16 guid_from_seed(uint8_t seed);

struct FieldSpec {
  uint8_t type;  // format::FieldType, or any byte for bad-type tests
  std::string name;
};

struct EventSpec {
  uint32_t pid = 0;
  uint16_t key = 0;
  uint16_t provider_index = 0;
  uint16_t id = 0;
  uint8_t version = 0;
  uint8_t level = 4;
  uint8_t opcode = 0;
  uint16_t task = 0;
  uint64_t keywords = 0;
  std::string name;
  std::vector<FieldSpec> fields;
};

// One record. tid/activity/related go in the header in format order, then
// the field values in the order they were added, then padding to even.
class RecordBuilder {
 public:
  RecordBuilder(uint16_t key, uint64_t ticks) : key_(key), ticks_(ticks) {}

  RecordBuilder& tid(uint32_t tid) { tid_ = tid; return *this; }
  RecordBuilder& activity(const Guid16& g) { activity_ = g; return *this; }
  RecordBuilder& related(const Guid16& g) { related_ = g; return *this; }

  RecordBuilder& u8(uint8_t v) { return put(&v, 1); }
  RecordBuilder& u16(uint16_t v) { return put(&v, 2); }
  RecordBuilder& u32(uint32_t v) { return put(&v, 4); }
  RecordBuilder& u64(uint64_t v) { return put(&v, 8); }
  RecordBuilder& i8(int8_t v) { return put(&v, 1); }
  RecordBuilder& i16(int16_t v) { return put(&v, 2); }
  RecordBuilder& i32(int32_t v) { return put(&v, 4); }
  RecordBuilder& i64(int64_t v) { return put(&v, 8); }
  RecordBuilder& f32(float v) { return put(&v, 4); }
  RecordBuilder& f64(double v) { return put(&v, 8); }
  RecordBuilder& boolean(bool v) { return u8(v ? 1 : 0); }
  RecordBuilder& string(std::string_view s);
  RecordBuilder& blob(std::span<const uint8_t> b);
  // `size` bytes of `v` (4 or 8: the process's pointer size).
  RecordBuilder& pointer(uint64_t v, unsigned size = 8) { return put(&v, size); }
  RecordBuilder& guid(const Guid16& g) { return put(g.data(), g.size()); }
  RecordBuilder& uleb128(uint64_t v);
  RecordBuilder& raw(std::span<const uint8_t> b) { return put(b.data(), b.size()); }

  // Writes this in the size field instead of the real size (damage tests).
  RecordBuilder& size_override(uint16_t size) { size_override_ = size; return *this; }
  // Leaves out the padding byte an odd record needs.
  RecordBuilder& no_padding() { pad_ = false; return *this; }

  uint64_t ticks() const { return ticks_; }
  Bytes encode() const;

 private:
  RecordBuilder& put(const void* p, size_t n);

  uint16_t key_;
  uint64_t ticks_;
  std::optional<uint32_t> tid_;
  std::optional<Guid16> activity_;
  std::optional<Guid16> related_;
  Bytes fields_;
  std::optional<uint16_t> size_override_;
  bool pad_ = true;
};

// One PACKET payload. begin/end ticks and the record count follow the
// records added unless set explicitly.
class PacketBuilder {
 public:
  PacketBuilder(uint32_t stream_id, uint32_t cpu, uint64_t sequence)
      : stream_id_(stream_id), cpu_(cpu), sequence_(sequence) {}

  PacketBuilder& lost_total(uint64_t n) { lost_total_ = n; return *this; }
  PacketBuilder& ticks(uint64_t begin, uint64_t end) { begin_ = begin; end_ = end; return *this; }
  PacketBuilder& record_count(uint32_t n) { record_count_ = n; return *this; }
  PacketBuilder& add(const RecordBuilder& r);
  PacketBuilder& raw(std::span<const uint8_t> b);  // bytes appended to the data

  Bytes payload() const;
  uint32_t stream_id() const { return stream_id_; }
  uint32_t cpu() const { return cpu_; }

 private:
  uint32_t stream_id_, cpu_;
  uint64_t sequence_;
  uint64_t lost_total_ = 0;
  std::optional<uint64_t> begin_, end_;
  std::optional<uint32_t> record_count_;
  uint64_t min_ticks_ = UINT64_MAX, max_ticks_ = 0;
  uint32_t records_ = 0;
  Bytes data_;
};

class TraceBuilder {
 public:
  TraceBuilder();  // a version 1.0 file header

  TraceBuilder& version(uint16_t major, uint16_t minor);  // rewrites the header
  TraceBuilder& clock(const format::ClockBlock& c);
  TraceBuilder& clock_ns();  // ticks are CLOCK_MONOTONIC ns
  TraceBuilder& process(uint32_t pid, std::string_view name,
                        const std::vector<std::string>& arguments = {},
                        uint32_t pointer_size = 8, uint32_t ppid = 1);
  TraceBuilder& stream(uint32_t id, uint32_t pid, uint32_t cpu);
  TraceBuilder& provider(uint32_t pid, uint16_t index, std::string_view name,
                         const Guid16& guid = {});
  TraceBuilder& event(const EventSpec& e);
  TraceBuilder& packet(const PacketBuilder& p);
  TraceBuilder& stream_end(uint32_t id, uint64_t lost_total, uint64_t abandoned_bytes,
                           uint64_t packets);
  // Any block, with a correct CRC.
  TraceBuilder& block(uint16_t type, std::span<const uint8_t> payload);
  TraceBuilder& raw(std::span<const uint8_t> bytes);  // appended as they are

  // The file so far; size() is also where the next block starts.
  const Bytes& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  // Where each block starts, in order.
  const std::vector<size_t>& block_offsets() const { return offsets_; }
  bool write(const std::string& path) const;

 private:
  Bytes bytes_;
  std::vector<size_t> offsets_;
};

}  // namespace spoor::testing

#endif  // SPOOR_TESTS_TRACE_BUILDER_H
