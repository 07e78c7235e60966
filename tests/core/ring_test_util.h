// Test helpers: a ring in aligned heap memory, and a strict decoder of the
// records in drained packets (every byte accounted for).
#ifndef SPOOR_TESTS_RING_TEST_UTIL_H
#define SPOOR_TESTS_RING_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "spoor/control.h"
#include "spoor/ring.h"
#include "spoor/trace_writer.h"

namespace spoor::test {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// A ring installed as the process's event ring for the test's lifetime.
class TestRing {
 public:
  TestRing(uint32_t cpus, uint32_t subbuf_size, uint32_t subbufs) {
    size_ = ring_bytes_needed(cpus, subbuf_size, subbufs);
    memory_.reset(std::aligned_alloc(64, (size_ + 63) & ~size_t{63}));
    EXPECT_EQ(ring_init(memory_.get(), size_, cpus, subbuf_size, &view_), Status::ok);
    EXPECT_EQ(view_.subbuf_count, subbufs);
    ring_install(view_);
  }
  ~TestRing() { ring_install(RingView{}); }
  const RingView& view() const { return view_; }

 private:
  size_t size_ = 0;
  std::unique_ptr<void, FreeDeleter> memory_;
  RingView view_{};
};

struct Record {
  uint32_t cpu;
  uint64_t packet_sequence;
  uint16_t key;
  uint32_t tid;         // the thread in effect (carried or inherited)
  bool carried_tid;
  bool short_form;      // 6-byte header (single-core writers)
  uint64_t ticks;
  std::vector<uint8_t> body;  // after header and tid
};

struct DrainResult {
  std::vector<Record> records;
  uint64_t packets = 0;
  bool ok = true;
  std::string problem;
};

// Decodes one packet strictly: long sizes even and >= 10, short ones >= 6
// and never first, records tile the packet exactly, the first record carries
// a tid, times inside [begin, end].
inline void decode_packet(const Packet& p, DrainResult& out) {
  uint32_t off = 0, count = 0, tid = 0;
  bool have_tid = false;
  uint64_t previous = 0;
  while (off < p.size) {
    if (off + 2 > p.size) {
      out.ok = false;
      out.problem = "a record header runs past the packet at " + std::to_string(off);
      return;
    }
    uint16_t word;
    std::memcpy(&word, p.data + off, 2);
    Record r{};
    r.cpu = p.cpu;
    r.packet_sequence = p.sequence;
    uint32_t size, hdr;
    if (word & format::kShortRecordFlag) {
      size = word & 0xFE;
      if (count == 0 || size < format::kShortRecordHeaderSize || off + size > p.size) {
        out.ok = false;
        out.problem = "bad short record (size " + std::to_string(size) + ") at " + std::to_string(off);
        return;
      }
      r.short_form = true;
      r.key = word >> 8;
      uint32_t t32;
      std::memcpy(&t32, p.data + off + 2, 4);
      r.ticks = previous + static_cast<uint64_t>(static_cast<int64_t>(
                               static_cast<int32_t>(t32 - static_cast<uint32_t>(previous))));
      hdr = format::kShortRecordHeaderSize;
    } else {
      size = word;
      if (size < format::kRecordHeaderSize || off + size > p.size) {
        out.ok = false;
        out.problem = "bad record size " + std::to_string(size) + " at " + std::to_string(off);
        return;
      }
      uint16_t key;
      std::memcpy(&key, p.data + off + 2, 2);
      r.key = key & format::kKeyMask;
      uint64_t t48 = 0;
      std::memcpy(&t48, p.data + off + 4, 6);
      r.ticks = p.begin_ticks + static_cast<uint64_t>(
                                    static_cast<int64_t>(((t48 - p.begin_ticks) & format::kTimeMask48) << 16) >> 16);
      hdr = format::kRecordHeaderSize;
      if (key & format::kKeyHasTid) {
        std::memcpy(&tid, p.data + off + 10, 4);
        have_tid = true;
        r.carried_tid = true;
        hdr += 4;
      } else if (count == 0) {
        out.ok = false;
        out.problem = "first record of packet has no tid";
        return;
      }
    }
    if (!have_tid) {
      out.ok = false;
      out.problem = "no tid";
      return;
    }
    r.tid = tid;
    if (r.ticks < p.begin_ticks || r.ticks > p.end_ticks) {
      out.ok = false;
      out.problem = "record time outside its packet's span";
      return;
    }
    previous = r.ticks;
    r.body.assign(p.data + off + hdr, p.data + off + size);
    out.records.push_back(std::move(r));
    off += size;
    ++count;
  }
  if (count != p.record_count) {
    out.ok = false;
    out.problem = "record count " + std::to_string(count) + " != " + std::to_string(p.record_count);
  }
}

// Drains every closed packet of every CPU (after flushing open ones when
// `flush` is set) and decodes them.
inline void drain(const RingView& v, DrainResult& out, bool flush, bool final = false) {
  for (uint32_t cpu = 0; cpu < v.cpu_count; ++cpu) {
    if (flush) ring_flush(v, cpu);
    for (;;) {
      Packet p;
      const Status s = ring_peek(v, cpu, spoor_port_ticks(), final, &p);
      if (s != Status::ok) break;
      decode_packet(p, out);
      ring_release(v, cpu, p);
      out.packets++;
    }
  }
}

inline uint64_t total_lost(const RingView& v) {
  uint64_t n = 0;
  for (uint32_t cpu = 0; cpu < v.cpu_count; ++cpu) n += ring_lost(v, cpu);
  return n;
}

// A TraceWriter sink that appends to *out: a trace file in memory.
inline Sink vector_sink(std::vector<uint8_t>* out) {
  return Sink{out, [](void* ctx, const void* data, size_t size) {
                auto* v = static_cast<std::vector<uint8_t>*>(ctx);
                const auto* b = static_cast<const uint8_t*>(data);
                v->insert(v->end(), b, b + size);
                return true;
              }};
}

// Enables a registered provider at every level and keyword.
inline void enable_all(const Provider& p) {
  apply_enable_state(*const_cast<ProviderControl*>(p.control()), {true, 0, ~0ull, 0});
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_RING_TEST_UTIL_H
