// The single-core writer (spoor/ring_masked.h): the short form's fast path
// for small events (ring_write_small), and one out-of-line path for
// everything else (every record of ring_claim, long records, opening a
// packet, closing one the record does not fit in, dropping when the ring is
// full), which writes the short form too when it applies. The same
// decisions as the lock-free writer in ring.h and ring.cpp, made with
// interrupts masked instead of with a compare-and-swap.
#include "spoor/ring.h"

namespace spoor {
namespace {

// The long header: key word (with the tid flag) and 48-bit time, the tid.
// Returns the header size.
uint32_t write_long_header(uint8_t* rec, uint32_t key, bool with_tid, uint32_t tid, uint64_t ticks) {
  const uint64_t word = (key | (with_tid ? format::kKeyHasTid : 0u)) | (ticks << 16);
  __builtin_memcpy(rec + 2, &word, 8);
  if (!with_tid) return format::kRecordHeaderSize;
  __builtin_memcpy(rec + 10, &tid, 4);
  return format::kRecordHeaderSize + 4;
}

// Every record that does not take a fast path: long ones (the thread
// changed, the key or body is too large, 2^31 ticks passed, an activity
// id), those that open a packet or end it, and every record of an event
// with variable or larger fields (ring_claim has no fast path of its own:
// flash counts more than its instructions). Writes the short form whenever
// it applies. Called with interrupts masked (`irq` is what to restore);
// unmasks before returning. Positions are 40 bits, but a single-core ring
// is smaller than 4 GiB, so offsets, packet slots and the "is the next
// packet free" distance are all exact in 32 bits; only the new head is
// formed in 64.
SPOOR_NOINLINE uint8_t* claim_long(uint32_t key, uint32_t body_size, uint32_t irq, Claim* claim) {
  const RingView& v = g_ring;
  const uint32_t S = v.subbuf_size;
  if (v.subbuf_mask == 0) {  // no ring installed: nothing to record, nothing to count into
    spoor_port_irq_restore(irq);
    return nullptr;
  }
  CpuControl& c = v.cpus[0];
  const uint32_t ring_mask = v.ring_mask;
  const uint64_t h = c.head.under_mask();
  const uint32_t pos = static_cast<uint32_t>(h);
  const uint32_t off = pos & (S - 1);
  const uint64_t ticks = spoor_port_ticks();
  const uint32_t tid = spoor_port_thread() & kTidMask;
  bool with_tid = off == 0 || static_cast<uint32_t>(h >> kPosBits) != tid;
  // The short form: same thread, not first in its packet, a key of 8 bits
  // and no activity flags, less than 2^31 ticks since the previous record.
  bool short_form = !with_tid && key <= format::kShortMaxKey &&
                    body_size <= format::kShortMaxSize - format::kShortRecordHeaderSize &&
                    ((ticks - c.last_ticks) >> 31) == 0;
  uint32_t size = ((short_form ? format::kShortRecordHeaderSize
                               : format::kRecordHeaderSize + (with_tid ? 4u : 0u)) +
                   body_size + 1u) & ~1u;
  uint32_t skip = 0;  // the current packet's unused tail, when the record does not fit
  if (off != 0 && off + size > S) {
    skip = S - off;
    with_tid = true;
    short_form = false;
    size = (format::kRecordHeaderSize + 4u + body_size + 1u) & ~1u;
  }
  const uint32_t start = pos + skip;
  // The packet at `start` is free once the drainer released it (the drainer
  // only ever moves `consumed` forward). Too large, or full: drop, never wait.
  if (size > S || size > format::kMaxRecordSize ||
      ((start & (S - 1)) == 0 &&
       start - static_cast<uint32_t>(c.consumed.under_mask()) > ring_mask)) {
    c.lost.under_mask()++;
    spoor_port_irq_restore(irq);
    return nullptr;
  }
  c.head.under_mask() = (((h & kPosMask) + skip + size) & kPosMask) | (uint64_t{tid} << kPosBits);
  c.last_ticks = ticks;
  // Stored while still masked, so a drain from an interrupt sees the end
  // of every packet the head has moved past.
  const uint32_t slot_mask = v.subbuf_count - 1;
  if (skip != 0) v.packet_end[(pos >> v.subbuf_shift) & slot_mask] = off;
  if (((start + size) & (S - 1)) == 0) v.packet_end[(start >> v.subbuf_shift) & slot_mask] = S;
  uint8_t* rec = v.data + (start & ring_mask);
  uint32_t header;
  if (short_form) {
    const uint32_t t32 = static_cast<uint32_t>(ticks);
    __builtin_memcpy(rec + 2, &t32, 4);
    header = format::kShortRecordHeaderSize;
    claim->commit_word = static_cast<uint16_t>(size | format::kShortRecordFlag | (key << 8));
  } else {
    header = write_long_header(rec, key, with_tid, tid, ticks);
    claim->commit_word = static_cast<uint16_t>(size);
  }
  spoor_port_irq_restore(irq);
  claim->commit_at = reinterpret_cast<uint16_t*>(rec);
  return rec + header;
}

}  // namespace

uint8_t* ring_claim(uint32_t key, uint32_t body_size, Claim* claim) {
  return claim_long(key, body_size, spoor_port_irq_save(), claim);
}

namespace {

// Stores the fields of a small event, given the short record's size (8 to
// 14): the size is even, so the fields' padding byte is ours to store too
// (whole 16- and 32-bit stores).
SPOOR_ALWAYS_INLINE void store_small(uint8_t* p, uint32_t size, uint32_t lo, uint32_t hi) {
  if (size > 10) {
    __builtin_memcpy(p, &lo, 4);
    if (size > 12) __builtin_memcpy(p + 4, &hi, 4);
    else __builtin_memcpy(p + 4, &hi, 2);
  } else if (size > 8) {
    __builtin_memcpy(p, &lo, 4);
  } else {
    __builtin_memcpy(p, &lo, 2);
  }
}

// ring_write_small's long form and slow path, entered with interrupts
// masked (`irq`). Out of line and reached by a tail call, so that nothing
// of the fast path has to survive a call (no register moves, no stack
// frame for a Claim there). `key_and_size`: the key, and the short
// record's size in the high half.
SPOOR_NOINLINE void write_small_long(uint32_t lo, uint32_t hi, uint32_t key_and_size, uint32_t irq) {
  const uint32_t key = key_and_size & 0xFFFF;
  const uint32_t size = key_and_size >> 16;
  // The long form's body is the same bytes: the fields and their padding.
  Claim claim;
  uint8_t* p = claim_long(key, size - format::kShortRecordHeaderSize, irq, &claim);
  if (p == nullptr) return;
  store_small(p, size, lo, hi);
  ring_publish(claim);
}

}  // namespace

// The short form's fast path (bench/RESULTS.md, "Firmware core": 48
// instructions here, 59 with the call site, hooks inline).
void ring_write_small(uint32_t lo, uint32_t hi, uint32_t key, uint32_t size) {
  const RingView& v = g_ring;
  // The three hooks first: values computed before a call would have to
  // survive it in callee-saved registers (spills on a Cortex-M).
  const uint32_t tid = spoor_port_thread() & kTidMask;
  const uint32_t irq = spoor_port_irq_save();
  const uint64_t ticks = spoor_port_ticks();
  // subbuf_mask (S - 1) is 0 while no ring is installed (ring_install
  // copies the whole view with interrupts masked): one test instead of
  // loading cpu_count as well.
  const uint32_t mask = v.subbuf_mask;
  // The fields go in with interrupts still masked, as two whole words
  // whatever their size: the bytes past the record's end that they cover
  // are zero in `lo` and `hi` (the fields are packed from bit 0) and lie
  // inside the packet (the fast path is taken only when all kSpan bytes
  // are), where the memory is zero already and no nested writer can have
  // reserved it yet. Two stores instead of a branch per size; a record of
  // 8 to 12 bytes within 14 bytes of its packet's end takes the slow path.
  constexpr uint32_t kSpan = format::kShortRecordHeaderSize + 8;
  // With SPOOR_MAX_EVENTS <= 255 every key fits the short form: no test.
  constexpr bool kKeyMayBeLong = SPOOR_MAX_EVENTS > format::kShortMaxKey;
  if (SPOOR_LIKELY(mask != 0)) {
    CpuControl& c = v.cpus[0];
    const uint64_t h = c.head.under_mask();
    const uint32_t pos = static_cast<uint32_t>(h);
    const uint32_t off = pos & mask;
    // off != 0 (not first in its packet) and off + kSpan < S in one
    // unsigned compare: off - 1 wraps to the largest value at 0.
    if (SPOOR_LIKELY(static_cast<uint32_t>(h >> kPosBits) == tid &&
                     (!kKeyMayBeLong || key <= format::kShortMaxKey) &&
                     ((ticks - c.last_ticks) >> 31) == 0 && off - 1 < mask - kSpan)) {
      // Inside one packet, and packets divide 2^32: the position's low
      // word cannot carry into the high one (the tid), so only it is stored.
      const uint32_t next = pos + size;
      __builtin_memcpy(&c.head.under_mask(), &next, 4);  // little-endian: the low word
      c.last_ticks = ticks;
      uint8_t* rec = v.data + (pos & v.ring_mask);
      const uint32_t t32 = static_cast<uint32_t>(ticks);
      __builtin_memcpy(rec + 2, &t32, 4);
      __builtin_memcpy(rec + format::kShortRecordHeaderSize, &lo, 4);
      __builtin_memcpy(rec + format::kShortRecordHeaderSize + 4, &hi, 4);
      spoor_port_irq_restore(irq);
      commit_word(reinterpret_cast<uint16_t*>(rec), size | format::kShortRecordFlag | (key << 8));
      return;
    }
  }
  write_small_long(lo, hi, key | (size << 16), irq);
}

}  // namespace spoor
