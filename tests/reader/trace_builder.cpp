#include "trace_builder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "spoor/crc32c.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

// Every append goes through resize + memcpy rather than vector::insert:
// GCC 12 at -O2/-O3 reports false -Wstringop-overflow and -Warray-bounds
// for insert() of a few bytes into a vector it just grew.
void append_bytes(Bytes& out, const void* p, size_t n) {
  if (n == 0) return;
  const size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}

void append_bytes(Bytes& out, std::span<const uint8_t> b) { append_bytes(out, b.data(), b.size()); }

template <class T>
void append(Bytes& out, const T& v) {
  append_bytes(out, &v, sizeof(T));
}

void append_string16(Bytes& out, std::string_view s) {
  append(out, static_cast<uint16_t>(s.size()));
  append_bytes(out, s.data(), s.size());
}

void append_uleb(Bytes& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7F;
    v >>= 7;
    if (v != 0) b |= 0x80;
    out.push_back(b);
  } while (v != 0);
}

}  // namespace

Guid16 guid_from_seed(uint8_t seed) {
  Guid16 g;
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<uint8_t>(seed + i);
  return g;
}

RecordBuilder& RecordBuilder::put(const void* p, size_t n) {
  append_bytes(fields_, p, n);
  return *this;
}

RecordBuilder& RecordBuilder::uleb128(uint64_t v) {
  append_uleb(fields_, v);
  return *this;
}

RecordBuilder& RecordBuilder::string(std::string_view s) {
  append_uleb(fields_, s.size());
  append_bytes(fields_, s.data(), s.size());
  return *this;
}

RecordBuilder& RecordBuilder::blob(std::span<const uint8_t> b) {
  append_uleb(fields_, b.size());
  append_bytes(fields_, b);
  return *this;
}

Bytes RecordBuilder::encode() const {
  Bytes out;
  uint16_t key = key_;
  if (tid_) key |= fmt::kKeyHasTid;
  if (activity_) key |= fmt::kKeyHasActivity;
  if (related_) key |= fmt::kKeyHasRelated;
  append(out, uint16_t{0});  // size, filled in below
  append(out, key);
  const uint64_t t = ticks_ & fmt::kTimeMask48;
  append_bytes(out, &t, 6);
  if (tid_) append(out, *tid_);
  if (activity_) append_bytes(out, *activity_);
  if (related_) append_bytes(out, *related_);
  append_bytes(out, fields_);
  if (pad_ && (out.size() & 1)) out.push_back(0);
  const uint16_t size = size_override_ ? *size_override_ : static_cast<uint16_t>(out.size());
  std::memcpy(out.data(), &size, 2);
  return out;
}

PacketBuilder& PacketBuilder::add(const RecordBuilder& r) {
  const Bytes b = r.encode();
  append_bytes(data_, b);
  min_ticks_ = std::min(min_ticks_, r.ticks());
  max_ticks_ = std::max(max_ticks_, r.ticks());
  ++records_;
  return *this;
}

PacketBuilder& PacketBuilder::raw(std::span<const uint8_t> b) {
  append_bytes(data_, b);
  return *this;
}

Bytes PacketBuilder::payload() const {
  fmt::PacketBlock h{};
  h.stream_id = stream_id_;
  h.cpu = cpu_;
  h.sequence = sequence_;
  h.begin_ticks = begin_ ? *begin_ : (records_ ? min_ticks_ : 0);
  h.end_ticks = end_ ? *end_ : max_ticks_;
  h.lost_total = lost_total_;
  h.record_count = record_count_ ? *record_count_ : records_;
  h.data_size = static_cast<uint32_t>(data_.size());
  Bytes out;
  append(out, h);
  append_bytes(out, data_);
  return out;
}

TraceBuilder::TraceBuilder() { version(fmt::kVersionMajor, fmt::kVersionMinor); }

TraceBuilder& TraceBuilder::version(uint16_t major, uint16_t minor) {
  fmt::FileHeader h{};
  std::memcpy(h.magic, fmt::kFileMagic, sizeof h.magic);
  h.version_major = major;
  h.version_minor = minor;
  h.header_size = sizeof h;
  if (bytes_.size() < sizeof h) bytes_.resize(sizeof h);
  std::memcpy(bytes_.data(), &h, sizeof h);
  return *this;
}

TraceBuilder& TraceBuilder::block(uint16_t type, std::span<const uint8_t> payload) {
  fmt::BlockHeader h{};
  h.magic = fmt::kBlockMagic;
  h.type = type;
  h.size = static_cast<uint32_t>(payload.size());
  h.crc32c = spoor::block_checksum(&h, payload.data(), payload.size());
  offsets_.push_back(bytes_.size());
  append(bytes_, h);
  append_bytes(bytes_, payload);
  return *this;
}

TraceBuilder& TraceBuilder::raw(std::span<const uint8_t> b) {
  append_bytes(bytes_, b);
  return *this;
}

TraceBuilder& TraceBuilder::clock(const format::ClockBlock& c) {
  Bytes p;
  append(p, c);
  return block(fmt::kBlockClock, p);
}

TraceBuilder& TraceBuilder::clock_ns() {
  format::ClockBlock c{};
  c.source = fmt::kClockMonotonicNs;
  c.freq_millihz = 1'000'000'000'000ull;
  return clock(c);
}

TraceBuilder& TraceBuilder::process(uint32_t pid, std::string_view name,
                                    const std::vector<std::string>& arguments,
                                    uint32_t pointer_size, uint32_t ppid) {
  fmt::ProcessBlock h{};
  h.pid = pid;
  h.ppid = ppid;
  h.pointer_size = pointer_size;
  Bytes p;
  append(p, h);
  append_string16(p, name);
  std::string cmdline;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i > 0) cmdline.push_back('\0');
    cmdline += arguments[i];
  }
  append_string16(p, cmdline);
  return block(fmt::kBlockProcess, p);
}

TraceBuilder& TraceBuilder::stream(uint32_t id, uint32_t pid, uint32_t cpu) {
  fmt::StreamBlock h{};
  h.stream_id = id;
  h.pid = pid;
  h.cpu = cpu;
  Bytes p;
  append(p, h);
  return block(fmt::kBlockStream, p);
}

TraceBuilder& TraceBuilder::provider(uint32_t pid, uint16_t index, std::string_view name,
                                     const Guid16& guid) {
  fmt::ProviderBlock h{};
  h.pid = pid;
  h.provider_index = index;
  std::memcpy(h.guid, guid.data(), 16);
  Bytes p;
  append(p, h);
  append_string16(p, name);
  return block(fmt::kBlockProvider, p);
}

TraceBuilder& TraceBuilder::event(const EventSpec& e) {
  fmt::EventBlock h{};
  h.pid = e.pid;
  h.event_key = e.key;
  h.provider_index = e.provider_index;
  h.id = e.id;
  h.version = e.version;
  h.level = e.level;
  h.opcode = e.opcode;
  h.task = e.task;
  h.keywords = e.keywords;
  h.field_count = static_cast<uint16_t>(e.fields.size());
  Bytes p;
  append(p, h);
  append_string16(p, e.name);
  for (const FieldSpec& f : e.fields) {
    p.push_back(f.type);
    append_string16(p, f.name);
  }
  return block(fmt::kBlockEvent, p);
}

TraceBuilder& TraceBuilder::packet(const PacketBuilder& pb) {
  const Bytes p = pb.payload();
  return block(fmt::kBlockPacket, p);
}

TraceBuilder& TraceBuilder::stream_end(uint32_t id, uint64_t lost_total, uint64_t abandoned_bytes,
                                       uint64_t packets) {
  fmt::StreamEndBlock h{};
  h.stream_id = id;
  h.lost_total = lost_total;
  h.abandoned_bytes = abandoned_bytes;
  h.packets = packets;
  Bytes p;
  append(p, h);
  return block(fmt::kBlockStreamEnd, p);
}

bool TraceBuilder::write(const std::string& path) const {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(bytes_.data(), 1, bytes_.size(), f) == bytes_.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace spoor::testing
