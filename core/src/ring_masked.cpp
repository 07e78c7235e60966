// The single-core writer's slow path (spoor/ring_masked.h): opening a
// packet, closing one the record does not fit in, dropping when the ring is
// full. The same decisions as the lock-free slow path in ring.cpp, made with
// interrupts masked instead of with a compare-and-swap.
#include "spoor/ring.h"

namespace spoor {

Reservation ring_reserve_slow(uint32_t body_size) {
  const RingView& v = g_ring;
  if (v.cpu_count == 0) return Reservation{};  // no ring: nothing recorded, nothing to count
  CpuControl& c = v.cpus[0];
  const uint32_t tid = spoor_port_thread() & kTidMask;
  const uint32_t S = v.subbuf_size;
  const uint64_t ring_bytes = uint64_t{1} << v.ring_shift;
  IrqMask masked;
  const uint64_t h = c.head.under_mask();
  const uint64_t pos = h & kPosMask;
  const uint32_t off = static_cast<uint32_t>(pos) & (S - 1);
  bool opening = off == 0;
  bool with_tid = opening || static_cast<uint32_t>(h >> kPosBits) != tid;
  uint32_t size = (format::kRecordHeaderSize + (with_tid ? 4u : 0u) + body_size + 1u) & ~1u;
  uint64_t start = pos;
  bool closes_current = false;
  if (!opening && off + size > S) {
    // Does not fit: close this packet where it is and open the next one.
    start = (pos - off + S) & kPosMask;
    closes_current = true;
    opening = true;
    with_tid = true;
    size = (format::kRecordHeaderSize + 4u + body_size + 1u) & ~1u;
  }
  if (size > S || size > format::kMaxRecordSize) {
    c.lost.under_mask()++;  // can never fit
    return Reservation{};
  }
  // The packet at `start` is free once the drainer released it (the drainer
  // runs with interrupts enabled, but only ever moves `consumed` forward).
  if (opening && ((start - c.consumed.load()) & kPosMask) >= ring_bytes) {
    c.lost.under_mask()++;  // ring full: drop, never wait
    return Reservation{};
  }
  const uint64_t end = (start + size) & kPosMask;
  const uint64_t ticks = spoor_port_ticks();
  c.head.under_mask() = end | (uint64_t{tid} << kPosBits);
  c.last_ticks = ticks;
  const uint64_t slot_mask = v.subbuf_count - 1;
  // Stored while still masked, so an interrupt's drain sees the end of every
  // packet whose head has moved past it.
  if (closes_current) v.packet_end[(pos >> v.subbuf_shift) & slot_mask] = off;
  if ((end & (S - 1)) == 0) v.packet_end[(start >> v.subbuf_shift) & slot_mask] = S;
  uint8_t* rec = v.data + (start & (ring_bytes - 1));
  return Reservation{rec, rec + format::kRecordHeaderSize + (with_tid ? 4u : 0u), size, tid,
                     with_tid, false, ticks};
}

}  // namespace spoor
