#include "spoor/kernelsrc/perf_record.h"

#include <cstring>

namespace spoor::kernelsrc {
namespace {

// A cursor over a record's body that never reads past `end`; once it has
// run out, every read fails and ok() says so.
class Cursor {
 public:
  Cursor(const uint8_t* at, const uint8_t* end) : at_(at), end_(end) {}
  bool u64(uint64_t* v) { return take(v, 8); }
  bool u32_pair(uint32_t* a, uint32_t* b) { return take(a, 4) && take(b, 4); }
  bool bytes(size_t n, Bytes* out) {
    if (!ok_ || static_cast<size_t>(end_ - at_) < n) return ok_ = false;
    *out = Bytes(at_, n);
    at_ += n;
    return true;
  }
  bool skip(size_t n) {
    Bytes ignored;
    return bytes(n, &ignored);
  }
  bool at_end() const { return ok_ && at_ == end_; }
  const uint8_t* position() const { return at_; }

 private:
  bool take(void* v, size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - at_) < n) return ok_ = false;
    std::memcpy(v, at_, n);
    at_ += n;
    return true;
  }
  const uint8_t* at_;
  const uint8_t* end_;
  bool ok_ = true;
};

constexpr uint64_t kKnownSampleBits = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                      PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                                      PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
                                      PERF_SAMPLE_STACK_USER;

// The body of a non-SAMPLE record: between its header and its trailer.
bool body(Bytes record, uint64_t sample_type, Cursor* out) {
  const uint32_t trailer = sample_id_size(sample_type);
  if (record.size() < sizeof(perf_event_header) + trailer) return false;
  *out = Cursor(record.data() + sizeof(perf_event_header), record.data() + record.size() - trailer);
  return true;
}

// A NUL-terminated string that fills the rest of the body (padded to 8).
bool padded_string(Cursor& c, const uint8_t* end, std::string_view* out) {
  const uint8_t* start = c.position();
  const void* nul = std::memchr(start, 0, static_cast<size_t>(end - start));
  if (nul == nullptr) return false;
  *out = std::string_view(reinterpret_cast<const char*>(start), static_cast<const uint8_t*>(nul) - start);
  return c.skip(static_cast<size_t>(end - start));
}

}  // namespace

uint32_t sample_id_size(uint64_t t) {
  uint32_t n = 0;
  for (uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
                       PERF_SAMPLE_IDENTIFIER})
    n += (t & bit) ? 8 : 0;
  return n;
}

bool record_identifier(Bytes record, uint64_t* id) {
  if (record.size() < sizeof(perf_event_header) + 8) return false;
  const size_t at = header_of(record).type == PERF_RECORD_SAMPLE ? sizeof(perf_event_header) : record.size() - 8;
  std::memcpy(id, record.data() + at, 8);
  return true;
}

bool parse_sample(Bytes record, uint64_t t, uint64_t regs_mask, Sample* s) {
  if ((t & ~kKnownSampleBits) != 0 || record.size() < sizeof(perf_event_header)) return false;
  Cursor c(record.data() + sizeof(perf_event_header), record.data() + record.size());
  uint64_t cpu_word = 0;
  if ((t & PERF_SAMPLE_IDENTIFIER) && !c.u64(&s->id)) return false;
  if ((t & PERF_SAMPLE_IP) && !c.u64(&s->ip)) return false;
  if ((t & PERF_SAMPLE_TID) && !c.u32_pair(&s->pid, &s->tid)) return false;
  if ((t & PERF_SAMPLE_TIME) && !c.u64(&s->time)) return false;
  if ((t & PERF_SAMPLE_ADDR) && !c.u64(&s->addr)) return false;
  if (t & PERF_SAMPLE_CPU) {
    if (!c.u64(&cpu_word)) return false;
    s->cpu = static_cast<uint32_t>(cpu_word);
  }
  if (t & PERF_SAMPLE_CALLCHAIN) {
    if (!c.u64(&s->callchain_nr) || s->callchain_nr > 0xFFFF) return false;
    if (!c.bytes(s->callchain_nr * 8, &s->callchain)) return false;
  }
  if (t & PERF_SAMPLE_RAW) {
    // u32 size, then size bytes; the kernel pads size so that the two
    // together end on an 8-byte boundary.
    uint32_t size = 0;
    Bytes size_bytes;
    if (!c.bytes(4, &size_bytes)) return false;
    std::memcpy(&size, size_bytes.data(), 4);
    if (!c.bytes(size, &s->raw)) return false;
  }
  if (t & PERF_SAMPLE_REGS_USER) {
    if (!c.u64(&s->regs_abi)) return false;
    if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE &&
        !c.bytes(static_cast<size_t>(__builtin_popcountll(regs_mask)) * 8, &s->regs))
      return false;
  }
  if (t & PERF_SAMPLE_STACK_USER) {
    // u64 size, size bytes, then (only when size != 0) u64 dyn_size: the
    // bytes actually copied, at most size.
    uint64_t size = 0, dyn = 0;
    Bytes data;
    if (!c.u64(&size) || size > 0xFFFF) return false;
    if (size != 0) {
      if (!c.bytes(size, &data) || !c.u64(&dyn) || dyn > size) return false;
      s->stack = data.first(dyn);
    }
  }
  return c.at_end();
}

bool record_time(Bytes record, uint64_t t, uint64_t* time) {
  if ((t & PERF_SAMPLE_TIME) == 0 || record.size() < sizeof(perf_event_header)) return false;
  if (header_of(record).type != PERF_RECORD_SAMPLE) {
    SampleId id;
    if (!parse_sample_id(record, t, &id)) return false;
    *time = id.time;
    return true;
  }
  size_t at = sizeof(perf_event_header);
  for (uint64_t before : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID}) at += (t & before) ? 8 : 0;
  if (record.size() < at + 8) return false;
  std::memcpy(time, record.data() + at, 8);
  return true;
}

bool parse_sample_id(Bytes record, uint64_t t, SampleId* out) {
  const uint32_t size = sample_id_size(t);
  if (record.size() < sizeof(perf_event_header) + size) return false;
  Cursor c(record.data() + record.size() - size, record.data() + record.size());
  uint64_t ignored = 0, cpu_word = 0;
  if ((t & PERF_SAMPLE_TID) && !c.u32_pair(&out->pid, &out->tid)) return false;
  if ((t & PERF_SAMPLE_TIME) && !c.u64(&out->time)) return false;
  if ((t & PERF_SAMPLE_ID) && !c.u64(&out->id)) return false;
  if ((t & PERF_SAMPLE_STREAM_ID) && !c.u64(&ignored)) return false;
  if (t & PERF_SAMPLE_CPU) {
    if (!c.u64(&cpu_word)) return false;
    out->cpu = static_cast<uint32_t>(cpu_word);
  }
  if ((t & PERF_SAMPLE_IDENTIFIER) && !c.u64(&out->id)) return false;
  return c.at_end();
}

bool parse_mmap2(Bytes record, uint64_t t, Mmap2* m) {
  Cursor c(nullptr, nullptr);
  if (!body(record, t, &c)) return false;
  const uint8_t* end = record.data() + record.size() - sample_id_size(t);
  Bytes middle;
  if (!c.u32_pair(&m->pid, &m->tid) || !c.u64(&m->addr) || !c.u64(&m->len) || !c.u64(&m->pgoff)) return false;
  // maj, min, ino, ino_generation; or build_id_size u8, 3 reserved, 20 bytes.
  if (!c.bytes(24, &middle) || !c.u32_pair(&m->prot, &m->flags)) return false;
  if (header_of(record).misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
    const uint8_t n = middle[0];
    if (n > 20) return false;
    m->build_id = middle.subspan(4, n);
  }
  return padded_string(c, end, &m->filename) && c.at_end();
}

bool parse_comm(Bytes record, uint64_t t, Comm* out) {
  Cursor c(nullptr, nullptr);
  if (!body(record, t, &c)) return false;
  const uint8_t* end = record.data() + record.size() - sample_id_size(t);
  out->exec = (header_of(record).misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
  return c.u32_pair(&out->pid, &out->tid) && padded_string(c, end, &out->comm) && c.at_end();
}

bool parse_task(Bytes record, uint64_t t, Task* out) {
  Cursor c(nullptr, nullptr);
  return body(record, t, &c) && c.u32_pair(&out->pid, &out->ppid) && c.u32_pair(&out->tid, &out->ptid) &&
         c.u64(&out->time) && c.at_end();
}

bool parse_lost(Bytes record, uint64_t t, Lost* out) {
  Cursor c(nullptr, nullptr);
  return body(record, t, &c) && c.u64(&out->id) && c.u64(&out->lost) && c.at_end();
}

}  // namespace spoor::kernelsrc
