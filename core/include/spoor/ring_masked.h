// The ring's writer side on a single-core target (SPOOR_SINGLE_CORE).
//
// A Cortex-M has no 64-bit compare-and-swap (an M0+ has no exclusive loads
// at all), so the reservation runs with interrupts masked through the port
// hooks (spoor/port.h): read head, size the record, read the clock, move
// head and remember the record's time, unmask. Everything else (copying the
// fields, the header, the commit) runs unmasked.
//
// An interrupt that raises an event between our reservation and our commit
// (a nested writer, as in ftrace) reserves after us, so its record lands
// after ours; it commits first, and a drainer that meets our uncommitted
// size word (0) stops there until we commit. Records stay in time order
// because the clock is read under the mask.
//
// Writers are sequential per ring, so the writer knows the previous record's
// full time and can use the 6-byte short header (docs/FORMAT.md, "Short
// records") when its event key is small, the thread did not change, it
// carries no activity ids, it is not the first record of its packet and
// less than 2^31 ticks passed since the previous record.
#ifndef SPOOR_RING_MASKED_H
#define SPOOR_RING_MASKED_H

#include "spoor/ring.h"

namespace spoor {

struct Reservation {
  uint8_t* record;     // start of the record (its header)
  uint8_t* body;       // after the header and tid: activity ids and fields go here
  uint32_t size;       // total record size (even)
  uint32_t tid;
  bool with_tid;       // the record carries the tid (first in packet, or thread changed)
  bool short_form;     // 6-byte header: size|1, key, low 32 bits of the time
  uint64_t ticks;
};

// Slow path: opening a packet, switching when the record does not fit,
// dropping when the ring is full. Masks interrupts itself; always writes
// the long form. Out of line. Returns a reservation whose record is null
// when the event was dropped (and counted) or no ring is installed.
Reservation ring_reserve_slow(uint32_t body_size);

// Reserves a record with `body_size` bytes after the header; short_ok: the
// caller's key fits a short record and it has no activity ids. Returns false
// when the event is dropped (ring full, no ring, or too large).
// Cost on the fast path (Cortex-M3, -Os; bench/RESULTS.md): the thread and
// clock hooks, irq_save/irq_restore, and about 30 instructions of sizing
// and bookkeeping.
SPOOR_ALWAYS_INLINE bool ring_reserve(uint32_t body_size, Reservation* out, bool short_ok = false) {
  const RingView& v = g_ring;
  if (SPOOR_UNLIKELY(v.cpu_count == 0)) return false;  // no ring: nothing to record or count
  CpuControl& c = v.cpus[0];
  const uint32_t tid = spoor_port_thread() & kTidMask;
  const uint32_t irq = spoor_port_irq_save();
  const uint64_t h = c.head.under_mask();
  // A single-core ring is smaller than 4 GiB, so the low 32 bits of the
  // position locate the record.
  const uint32_t pos = static_cast<uint32_t>(h);
  const uint32_t off = pos & (v.subbuf_size - 1);
  const bool with_tid = static_cast<uint32_t>(h >> kPosBits) != tid;
  const uint64_t ticks = spoor_port_ticks();
  const bool short_form = short_ok && !with_tid &&
                          body_size <= format::kShortMaxSize - format::kShortRecordHeaderSize &&
                          ticks - c.last_ticks < format::kShortMaxTickDelta;
  const uint32_t header = short_form ? format::kShortRecordHeaderSize
                                     : format::kRecordHeaderSize + (with_tid ? 4u : 0u);
  const uint32_t size = (header + body_size + 1u) & ~1u;
  // Opening a packet (off == 0) or filling it up goes the slow way.
  if (SPOOR_UNLIKELY(off == 0 || off + size >= v.subbuf_size)) {
    spoor_port_irq_restore(irq);
    *out = ring_reserve_slow(body_size);
    return out->record != nullptr;
  }
  c.head.under_mask() = ((h + size) & kPosMask) | (uint64_t{tid} << kPosBits);
  c.last_ticks = ticks;
  spoor_port_irq_restore(irq);
  uint8_t* rec = v.data + (pos & ((uint32_t{1} << v.ring_shift) - 1));
  *out = Reservation{rec, rec + header, size, tid, with_tid, short_form, ticks};
  return true;
}

// Fills in the header and publishes the record: the release store of the
// first 16 bits (never 0 once committed) comes after everything else.
SPOOR_ALWAYS_INLINE void ring_commit(const Reservation& r, uint16_t key_and_flags) {
  uint8_t* p = r.record;
  if (r.short_form) {
    const uint32_t t32 = static_cast<uint32_t>(r.ticks);
    __builtin_memcpy(p + 2, &t32, 4);
    const uint16_t word = static_cast<uint16_t>(r.size | format::kShortRecordFlag |
                                                (uint32_t{key_and_flags} << 8));
    __atomic_store_n(reinterpret_cast<uint16_t*>(p), word, __ATOMIC_RELEASE);
    return;
  }
  const uint64_t key = key_and_flags | (r.with_tid ? format::kKeyHasTid : 0u);
  const uint64_t word = key | (r.ticks << 16);
  __builtin_memcpy(p + 2, &word, 8);
  if (r.with_tid) __builtin_memcpy(p + 10, &r.tid, 4);
  __atomic_store_n(reinterpret_cast<uint16_t*>(p), static_cast<uint16_t>(r.size), __ATOMIC_RELEASE);
}

}  // namespace spoor

#endif  // SPOOR_RING_MASKED_H
