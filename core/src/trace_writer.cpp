// Block serialization for TraceWriter.
#include "spoor/trace_writer.h"

#include "spoor/crc32c.h"
#include "spoor/registry.h"

namespace spoor {

namespace {

uint16_t clamp16(size_t n) { return n > 0xFFFF ? 0xFFFF : static_cast<uint16_t>(n); }

uint32_t cstr_len(const char* s) {
  uint32_t n = 0;
  if (s)
    while (s[n]) ++n;
  return n;
}

// A length-prefixed string: a u16 length piece and the bytes piece.
struct LenStr {
  uint16_t len;
  const char* data;
  LenStr(const char* s, size_t n) : len(clamp16(n)), data(s ? s : "") {}
  explicit LenStr(const char* s) : LenStr(s, cstr_len(s)) {}
};

}  // namespace

Status TraceWriter::put(const void* data, size_t size) {
  if (size == 0) return Status::ok;
  if (!sink_.write(sink_.context, data, size)) return Status::sink_failed;
  bytes_ += size;
  return Status::ok;
}

format::BlockHeader TraceWriter::block_header(uint16_t type, size_t size) {
  format::BlockHeader h{};
  h.magic = format::kBlockMagic;
  h.type = type;
  h.size = static_cast<uint32_t>(size);
  return h;
}

Status TraceWriter::block(uint16_t type, const Piece* pieces, size_t count) {
  return block_from(type, [&](auto&& put_piece) {
    for (size_t i = 0; i < count; ++i) put_piece(pieces[i].data, pieces[i].size);
  });
}

Status TraceWriter::file_header() {
  format::FileHeader h{};
  for (int i = 0; i < 8; ++i) h.magic[i] = format::kFileMagic[i];
  h.version_major = format::kVersionMajor;
  h.version_minor = format::kVersionMinor;
  h.header_size = sizeof(format::FileHeader);
  return put(&h, sizeof h);
}

Status TraceWriter::clock(const format::ClockBlock& clock) {
  Piece p{&clock, sizeof clock};
  return block(format::kBlockClock, &p, 1);
}

Status TraceWriter::process(uint32_t pid, uint32_t ppid, const char* name, const char* cmdline,
                            size_t cmdline_size) {
  format::ProcessBlock b{};
  b.pid = pid;
  b.ppid = ppid;
  b.pointer_size = sizeof(void*);
  LenStr n(name), c(cmdline, cmdline_size);
  Piece pieces[] = {{&b, sizeof b}, {&n.len, 2}, {n.data, n.len}, {&c.len, 2}, {c.data, c.len}};
  return block(format::kBlockProcess, pieces, 5);
}

Status TraceWriter::symbol_map(uint32_t pid, format::SymbolMapKind kind, const char* path,
                              size_t path_size, uint64_t offset, const void* data, size_t size) {
  format::SymbolMapBlock b{};
  b.pid = pid;
  b.kind = kind;
  b.path_size = static_cast<uint16_t>(path_size > 0xFFFF ? 0xFFFF : path_size);
  b.offset = offset;
  Piece pieces[] = {{&b, sizeof b}, {path, b.path_size}, {data, size}};
  return block(format::kBlockSymbolMap, pieces, 3);
}

Status TraceWriter::stream(uint32_t stream_id, uint32_t pid, uint32_t cpu) {
  format::StreamBlock b{};
  b.stream_id = stream_id;
  b.pid = pid;
  b.cpu = cpu;
  Piece p{&b, sizeof b};
  return block(format::kBlockStream, &p, 1);
}

Status TraceWriter::new_metadata(uint32_t pid) {
  const uint32_t providers = Registry::provider_count();
  while (providers_described_ < providers) {
    Provider* p = Registry::provider(providers_described_ + 1);
    if (p == nullptr) break;  // still being published; next call
    format::ProviderBlock b{};
    b.pid = pid;
    b.provider_index = p->index();
    for (int i = 0; i < 16; ++i) b.guid[i] = p->id().bytes[i];
    LenStr n(p->name());
    Piece pieces[] = {{&b, sizeof b}, {&n.len, 2}, {n.data, n.len}};
    if (Status s = block(format::kBlockProvider, pieces, 3); s != Status::ok) return s;
    ++providers_described_;
  }
  const uint32_t limit = Registry::event_key_limit();
  while (events_described_ + 1 < limit) {
    const uint32_t key = events_described_ + 1;
    const spoor_event_desc* e = Registry::event(key);
    if (e == nullptr) break;  // a racing registration is still filling it in
    // The event's provider is described above: registration requires it.
    format::EventBlock b{};
    b.pid = pid;
    b.event_key = static_cast<uint16_t>(key);
    b.provider_index = e->provider->index();
    b.id = e->id;
    b.version = e->version;
    b.level = e->level;
    b.opcode = e->opcode;
    b.task = e->task;
    b.keywords = e->keywords;
    b.field_count = e->field_count;
    const Status s = block_from(format::kBlockEvent, [&](auto&& put_piece) {
      LenStr n(e->name);
      put_piece(&b, sizeof b);
      put_piece(&n.len, 2);
      put_piece(n.data, n.len);
      for (uint16_t f = 0; f < e->field_count; ++f) {
        LenStr fn(e->fields[f].name);
        put_piece(&e->fields[f].type, 1);
        put_piece(&fn.len, 2);
        put_piece(fn.data, fn.len);
      }
    });
    if (s != Status::ok) return s;
    ++events_described_;
  }
  return Status::ok;
}

Status TraceWriter::packet(uint32_t stream_id, const Packet& packet) {
  format::PacketBlock b{};
  b.stream_id = stream_id;
  b.cpu = packet.cpu;
  b.sequence = packet.sequence;
  b.begin_ticks = packet.begin_ticks;
  b.end_ticks = packet.end_ticks;
  b.lost_total = packet.lost_total;
  b.record_count = packet.record_count;
  b.data_size = packet.size;
  Piece pieces[] = {{&b, sizeof b}, {packet.data, packet.size}};
  return block(format::kBlockPacket, pieces, 2);
}

Status TraceWriter::stream_end(uint32_t stream_id, uint64_t lost_total, uint64_t abandoned_bytes,
                               uint64_t packets) {
  format::StreamEndBlock b{};
  b.stream_id = stream_id;
  b.lost_total = lost_total;
  b.abandoned_bytes = abandoned_bytes;
  b.packets = packets;
  Piece p{&b, sizeof b};
  return block(format::kBlockStreamEnd, &p, 1);
}

}  // namespace spoor
