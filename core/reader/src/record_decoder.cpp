// Record layout (docs/FORMAT.md, "Records"): u16 size, u16 key and flags,
// u48 time, then the optional tid and activity IDs, the fields in descriptor
// order, and 0 or 1 byte of padding. A short record (bit 0 of its first byte
// set) has u8 size|1, u8 key, u32 time, then the fields and padding. The decoder checks that its cursor
// lands exactly on the record's end, so a writer/reader disagreement about
// any field width shows up at the first record it affects.
#include "record_decoder.h"

#include <cstring>

#include "byte_cursor.h"
#include "spoor/format.h"
#include "spoor/reader/names.h"
#include "text.h"

namespace spoor::reader {
namespace {

namespace fmt = spoor::format;

std::string field_what(const FieldDescriptor& f) {
  return "field '" + f.name + "' (" + field_type_name(f.type) + ")";
}

// Reads `size` little-endian bytes as an unsigned value.
bool read_unsigned(ByteCursor& c, size_t size, uint64_t& out) {
  uint64_t v = 0;
  if (!c.read(&v, size)) return false;
  out = v;
  return true;
}

// Sign-extends the low `size` bytes.
int64_t sign_extend(uint64_t v, size_t size) {
  const unsigned shift = static_cast<unsigned>(64 - 8 * size);
  return static_cast<int64_t>(v << shift) >> shift;
}

bool decode_length_prefixed(ByteCursor& c, const FieldDescriptor& f, std::span<const uint8_t>& out,
                            std::string& problem) {
  uint64_t n = 0;
  switch (c.read_uleb128(n)) {
    case ByteCursor::Uleb::kOk: break;
    case ByteCursor::Uleb::kTruncated:
      problem = field_what(f) + " has a length that runs past the record's end";
      return false;
    case ByteCursor::Uleb::kOverflow:
      problem = field_what(f) + " has a length that overflows 64 bits";
      return false;
  }
  if (n > c.remaining()) {
    problem = field_what(f) + " claims " + num(n) + " bytes but the record has " +
              num(c.remaining()) + " left";
    return false;
  }
  out = {c.pos(), static_cast<size_t>(n)};
  c.skip(static_cast<size_t>(n));
  return true;
}

// Decodes one field value; false with `problem` set when its bytes are not
// all inside the record.
bool decode_field(ByteCursor& c, const FieldDescriptor& f, uint32_t pointer_size, Value& out,
                  std::string& problem) {
  static constexpr uint8_t kWidth[] = {0, 1, 2, 4, 8, 1, 2, 4, 8};
  uint64_t raw = 0;
  size_t need = 0;
  switch (f.type) {
    case fmt::kFieldU8: case fmt::kFieldU16: case fmt::kFieldU32: case fmt::kFieldU64:
      need = kWidth[f.type];
      if (!read_unsigned(c, need, raw)) break;
      out.emplace<uint64_t>(raw);
      return true;
    case fmt::kFieldI8: case fmt::kFieldI16: case fmt::kFieldI32: case fmt::kFieldI64:
      need = kWidth[f.type];
      if (!read_unsigned(c, need, raw)) break;
      out.emplace<int64_t>(sign_extend(raw, need));
      return true;
    case fmt::kFieldF32: {
      need = 4;
      float v = 0;
      if (!c.read(v)) break;
      out.emplace<double>(v);
      return true;
    }
    case fmt::kFieldF64: {
      need = 8;
      double v = 0;
      if (!c.read(v)) break;
      out.emplace<double>(v);
      return true;
    }
    case fmt::kFieldBool: {
      need = 1;
      uint8_t v = 0;
      if (!c.read(v)) break;
      out.emplace<bool>(v != 0);
      return true;
    }
    case fmt::kFieldString: {
      std::span<const uint8_t> s;
      if (!decode_length_prefixed(c, f, s, problem)) return false;
      out.emplace<std::string_view>(reinterpret_cast<const char*>(s.data()), s.size());
      return true;
    }
    case fmt::kFieldBlob: {
      std::span<const uint8_t> s;
      if (!decode_length_prefixed(c, f, s, problem)) return false;
      out.emplace<Blob>(Blob{s});
      return true;
    }
    case fmt::kFieldPointer:
      need = pointer_size;
      if (!read_unsigned(c, need, raw)) break;
      out.emplace<Pointer>(Pointer{raw});
      return true;
    case fmt::kFieldActivityId: {
      need = fmt::kActivityIdSize;
      Guid g;
      if (!c.read(g.bytes.data(), g.bytes.size())) break;
      out.emplace<Guid>(g);
      return true;
    }
    default:
      // The block walk rejects EVENT blocks with unknown types, so this is
      // only reachable if the two disagree.
      problem = field_what(f) + " has a type this reader cannot decode";
      return false;
  }
  problem = field_what(f) + " needs " + num(need) + " bytes but the record has " +
            num(c.remaining()) + " left";
  return false;
}

// The fields of descriptor `d` from `c`, then the check that at most one
// byte of padding is left in the record.
bool decode_fields(const RecordInput& in, const EventDescriptor& d, const uint8_t* start,
                   uint32_t size, ByteCursor& c, Event& out, std::string& problem) {
  out.fields.resize(d.fields.size());
  for (size_t i = 0; i < d.fields.size(); ++i) {
    out.fields[i].field = &d.fields[i];
    if (!decode_field(c, d.fields[i], in.pointer_size, out.fields[i].value, problem)) {
      problem = "event '" + d.name + "': " + problem;
      return false;
    }
  }
  // Padding brings an odd end up to even, and nothing else may follow.
  const size_t used = static_cast<size_t>(c.pos() - start);
  if (size - used != (used & 1)) {
    problem = "event '" + d.name + "' ends at byte " + num(used) + " of its " + num(size) +
              "-byte record (at most 1 byte of padding may follow)";
    return false;
  }
  return true;
}

const EventDescriptor* descriptor_of(const RecordInput& in, uint16_t key) {
  return in.descriptors->find(*in.trace, in.stream->pid, key);
}

void finish_event(const RecordInput& in, const EventDescriptor& d, uint32_t tid, uint64_t ticks,
                  Event& out) {
  out.ticks = ticks;
  out.time_ns = in.trace->clock().to_ns(out.ticks);
  out.cpu = in.packet->cpu;
  out.pid = in.stream->pid;
  out.tid = tid;
  out.stream_id = in.stream->id;
  out.packet_sequence = in.packet->sequence;
  out.offset = in.offset;
  out.provider = d.provider;
  out.descriptor = &d;
}

// Short form: u8 size|1, u8 key, u32 time, fields, padding.
uint32_t decode_short_record(const RecordInput& in, uint32_t tid, Event& out,
                             std::string& problem) {
  const uint8_t* start = in.record;
  const uint32_t size = start[0] & 0xFEu;
  if (in.first_in_packet) {
    problem = "the packet's first record is a short record (it must carry the full time and "
              "thread id)";
    return 0;
  }
  if (size < fmt::kShortRecordHeaderSize) {
    problem = "the short record size " + num(size) + " is invalid (even, at least 6)";
    return 0;
  }
  if (size > in.available) {
    problem = "the short record of " + num(size) + " bytes runs past the packet's end (" +
              num(in.available) + " bytes left)";
    return 0;
  }
  const uint16_t event_key = start[1];
  const EventDescriptor* d = descriptor_of(in, event_key);
  if (d == nullptr) {
    problem = "event key " + num(event_key) + " has no EVENT block for pid " + num(in.stream->pid);
    return 0;
  }
  uint32_t time32 = 0;
  std::memcpy(&time32, start + 2, 4);
  ByteCursor c(start + fmt::kShortRecordHeaderSize, start + size);
  out.activity_id.reset();
  out.related_activity_id.reset();
  if (!decode_fields(in, *d, start, size, c, out, problem)) return 0;
  finish_event(in, *d, tid, fmt::widen_short_ticks(time32, in.previous_ticks), out);
  return size;
}

}  // namespace

uint64_t widen_ticks(uint64_t time48, uint64_t begin_ticks) {
  uint64_t diff = (time48 - begin_ticks) & fmt::kTimeMask48;
  if (diff & (1ull << 47)) diff -= 1ull << 48;  // negative: earlier than begin (mod 2^64)
  return begin_ticks + diff;
}

uint32_t decode_record(const RecordInput& in, uint32_t& tid, Event& out, std::string& problem) {
  const uint8_t* start = in.record;
  if (in.available >= 1 && (start[0] & fmt::kShortRecordFlag) != 0)
    return decode_short_record(in, tid, out, problem);
  if (in.available < fmt::kRecordHeaderSize) {
    problem = "the record header runs past the packet's end (" + num(in.available) +
              " bytes left, a header is 10)";
    return 0;
  }
  uint16_t size = 0, key = 0;
  std::memcpy(&size, start, 2);
  std::memcpy(&key, start + 2, 2);
  if (size < fmt::kRecordHeaderSize || (size & 1) != 0) {
    problem = "the record size " + num(size) + " is invalid (even, at least 10)";
    return 0;
  }
  if (size > in.available) {
    problem = "the record of " + num(size) + " bytes runs past the packet's end (" +
              num(in.available) + " bytes left)";
    return 0;
  }
  ByteCursor c(start + 4, start + size);
  uint64_t time48 = 0;
  c.read(&time48, 6);

  const uint16_t event_key = key & fmt::kKeyMask;
  const EventDescriptor* d = descriptor_of(in, event_key);
  if (d == nullptr) {
    problem = "event key " + num(event_key) + " has no EVENT block for pid " + num(in.stream->pid);
    return 0;
  }
  if (key & fmt::kKeyHasTid) {
    if (!c.read(tid)) {
      problem = "the thread id runs past the record's end";
      return 0;
    }
  } else if (in.first_in_packet) {
    problem = "the packet's first record carries no thread id";
    return 0;
  }
  out.activity_id.reset();
  out.related_activity_id.reset();
  if (key & fmt::kKeyHasActivity) {
    Guid g;
    if (!c.read(g.bytes.data(), g.bytes.size())) {
      problem = "the activity id runs past the record's end";
      return 0;
    }
    out.activity_id = g;
  }
  if (key & fmt::kKeyHasRelated) {
    Guid g;
    if (!c.read(g.bytes.data(), g.bytes.size())) {
      problem = "the related activity id runs past the record's end";
      return 0;
    }
    out.related_activity_id = g;
  }

  if (!decode_fields(in, *d, start, size, c, out, problem)) return 0;
  finish_event(in, *d, tid, widen_ticks(time48, in.packet->begin_ticks), out);
  return size;
}

}  // namespace spoor::reader
