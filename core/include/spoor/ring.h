// Per-CPU ring buffers in memory the caller hands in.
//
// Layout of the span (no pointers anywhere, so another process that maps the
// same bytes can drain it):
//
//   RingHeader                      64 bytes
//   CpuControl[cpu_count]           128 bytes each: a writer line, a reader line
//   uint32 packet_end[cpu_count][N] where each closed packet's data ends
//   data[cpu_count][N][S]           N sub-buffers (packets) of S bytes per CPU
//
// Writers never block, allocate or lock. A writer picks its CPU's ring,
// reserves space with one compare-and-swap on that ring's head, writes the
// record and commits it by storing the record's size with release ordering
// (the size is the commit marker, see docs/FORMAT.md). When the next packet
// is still owned by the drainer, the event is dropped and counted in `lost`.
//
// head packs a 40-bit byte position (modulo 2^40; positions index a virtual
// space where each ring repeats) and the 24-bit id of the last thread that
// wrote, so the "thread changed, write the tid" decision is made atomically
// with the reservation. A writer opening a packet when the drainer has
// nearly caught up may go on at the start of the next lap instead
// (ring.cpp's rewind_target), so the writes stay in the part of the ring
// the caches hold; the packets it skips get kSkipToNextLap as their end.
//
// On a single-core target (SPOOR_SINGLE_CORE: a Cortex-M, with no 64-bit
// atomics and on an M0+ no exclusive loads at all) the reservation instead
// runs with interrupts masked: spoor/ring_masked.h. The layout and the
// drainer side are the same.
#ifndef SPOOR_RING_H
#define SPOOR_RING_H

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "spoor/atomic.h"
#include "spoor/config.h"
#include "spoor/format.h"
#include "spoor/port.h"
#include "spoor/status.h"

namespace spoor {

inline constexpr uint32_t kRingMagic = 0x474E4952u;  // "RING"
inline constexpr uint32_t kRingVersion = 2;  // 2: writers go back to a lap's start (kSkipToNextLap)
inline constexpr int kPosBits = 40;
inline constexpr uint64_t kPosMask = (uint64_t{1} << kPosBits) - 1;
inline constexpr uint32_t kTidMask = 0xFFFFFF;
inline constexpr uint32_t kMinSubbufSize = 256;
inline constexpr uint32_t kMaxSubbufSize = 1u << 20;
// A packet_end that says the writers left this lap here for the start of
// the next one: the packets from this one to the lap's end hold nothing.
inline constexpr uint32_t kSkipToNextLap = 0xFFFFFFFFu;

struct RingHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t cpu_count;
  uint32_t subbuf_shift;      // S = 1 << subbuf_shift
  uint32_t subbuf_count;      // N, a power of two >= 2
  uint32_t reserved0;
  uint64_t cpu_offset;        // offsets from the start of the span
  uint64_t packet_end_offset;
  uint64_t data_offset;
  uint64_t total_size;        // bytes of the span in use
  uint64_t reserved1;
};
static_assert(sizeof(RingHeader) == 64);

// The 64-bit words writers and the drainer share: lock-free atomics, or on a
// single-core target words that are only touched with interrupts masked.
#if SPOOR_SINGLE_CORE
using RingWord = IrqAtomic<uint64_t>;
#else
using RingWord = std::atomic<uint64_t>;
#endif

struct alignas(64) CpuControl {
  // Written by writers on every event: its own cache line.
  RingWord head;                   // [position:40][last tid:24]
  RingWord lost;                   // events dropped on this CPU
  uint64_t last_ticks;             // masked writers only: the time of the last record reserved
  uint64_t furthest;               // lock-free writers only: bytes into a lap any packet reached
  uint64_t pad0[4];
  // Written by the drainer; writers read `consumed` only when they open a packet.
  RingWord consumed;               // position of the oldest packet not yet released
  uint64_t packets;                // packets released so far (the next sequence number)
  uint64_t abandoned_bytes;        // reserved space a dead writer never committed
  uint64_t pad1[5];
};
static_assert(sizeof(CpuControl) == 128);

// A process's view of a ring: pointers into the span, computed once.
struct RingView {
  CpuControl* cpus = nullptr;
  uint32_t* packet_end = nullptr;   // accessed with __atomic builtins
  uint8_t* data = nullptr;
  uint32_t cpu_count = 0;
  uint32_t subbuf_shift = 0;
  uint32_t subbuf_size = 0;
  uint32_t subbuf_count = 0;
  uint32_t ring_shift = 0;          // bytes per CPU = 1 << ring_shift
  uint32_t ring_mask = 0;           // (1 << ring_shift) - 1: a position's offset in its CPU's ring
  uint32_t subbuf_mask = 0;         // subbuf_size - 1: a position's offset in its packet
  // Hosted writers only (null elsewhere): called by the writer that opens a
  // packet further into its CPU's ring than any before (on the first lap,
  // or past where the writers went back to the start), before it writes
  // there, with the packet's bytes. The preloaded library maps them in one
  // system call instead of a page fault per page.
  void (*first_use)(uint8_t* packet, uint32_t bytes) = nullptr;
  // Hosted writers only (null elsewhere: full means drop): called by a
  // writer that found the next packet still the drainer's, with how many
  // times it has asked for this record. True: it waited, look again; false:
  // drop the record and count it lost. The preloaded library waits for
  // `spoor record --wait-when-full`, whose drainer runs in another process.
  bool (*when_full)(uint32_t asked) = nullptr;
#if !SPOOR_SINGLE_CORE
  // Lock-free writers: each record's time is its tick reading ANDed with
  // this, so times are multiples of a power of two (format::ClockBlock's
  // time_grain_ticks says which). All ones keeps every tick. Not on
  // single-core targets, whose writers keep every tick: ~70 bytes of flash
  // there (the view's copies and its all-ones start), of a 2 KiB budget.
  uint64_t tick_mask = ~uint64_t{0};
#endif
};

// The ring events go to. All zero (cpu_count 0, subbuf_mask 0) while no
// session is attached: the lock-free writer tests cpu_count, the single-core
// writer subbuf_mask (which it loads anyway).
extern RingView g_ring;

// Bytes a ring needs for cpu_count CPUs with subbuf_count sub-buffers of
// subbuf_size bytes each.
size_t ring_bytes_needed(uint32_t cpu_count, uint32_t subbuf_size, uint32_t subbuf_count);

// Lays a ring out in `memory` (size bytes, 64-byte aligned, zero-filled by
// the caller or not: this function clears what it uses). subbuf_size must be
// a power of two in [256, 1 MiB]; the sub-buffer count is the largest power
// of two >= 2 that fits. Returns ok, or invalid_argument (null or unaligned
// memory, bad sizes, cpu_count 0) or out_of_space (too small for 2 packets
// per CPU).
// memory_is_zero: the memory is known to be zero already (fresh pages), so
// only the headers are written and the data pages stay untouched until used.
Status ring_init(void* memory, size_t size, uint32_t cpu_count, uint32_t subbuf_size,
                 RingView* view, bool memory_is_zero = false);

// The sub-buffer count ring_init picks for about `buffer_bytes` per CPU:
// the largest power of two >= 2 whose packets fit in it.
constexpr uint32_t packets_per_cpu(uint64_t buffer_bytes, uint32_t packet_bytes) {
  uint32_t n = 2;
  while (uint64_t{n} * 2 * packet_bytes <= buffer_bytes) n *= 2;
  return n;
}

// Writers go back to the start of a ring of 4 * kRingRewindAfter or more
// once they open a packet this far into a lap with the drainer close behind
// (ring.cpp's rewind_target).
inline constexpr uint64_t kRingRewindAfter = uint64_t{4} << 20;

// Whether writers ever go back to the start of a ring of `ring_bytes` per
// CPU: not in smaller rings, nor on single-core targets (ring_masked.h).
constexpr bool ring_goes_back(uint64_t ring_bytes) {
  return !SPOOR_SINGLE_CORE && ring_bytes >= 4 * kRingRewindAfter;
}

// How far into a lap of a `ring_bytes` ring of `packet_bytes` packets the
// writers reach while the drainer keeps up: the packet they open at
// kRingRewindAfter is the last before they go back; the whole ring where
// they never do.
constexpr uint64_t ring_reach_while_drained(uint64_t ring_bytes, uint32_t packet_bytes) {
  return ring_goes_back(ring_bytes) ? kRingRewindAfter + packet_bytes : ring_bytes;
}

// Opens a ring that ring_init laid out, possibly in another process.
// Returns ok or invalid_argument (bad magic, version, or sizes that do not
// fit `size`).
Status ring_open(void* memory, size_t size, RingView* view);

// Makes `view` the ring every event goes to (or detaches with an empty view).
void ring_install(const RingView& view);

// ---------------------------------------------------------------------------
// Writer side
// ---------------------------------------------------------------------------

#if !SPOOR_SINGLE_CORE
// Lock-free writers, any number of CPUs. (Single-core targets: the writer
// side is in spoor/ring_masked.h, included at the end.)

struct Reservation {
  uint8_t* record;     // start of the record (its header)
  uint8_t* body;       // after the header and tid: activity ids and fields go here
  uint32_t size;       // total record size (even)
  uint32_t tid;
  bool with_tid;       // the record carries the tid (first in packet, or thread changed)
  uint64_t ticks;
};

// Slow path: opening a packet, switching when the record does not fit,
// dropping when the ring is full. Out of line. Returns a reservation whose
// record is null when the event was dropped (and counted).
Reservation ring_reserve_slow(uint32_t body_size);

// The tick count for a record, read after the load of the CPU's head that
// the reservation's CAS checks. A writer that reaches a ring from another
// CPU (it migrated after reading its CPU number) finds the head line in
// another core's cache; without the fence its rdtsc runs ahead of that slow
// load, and its record, placed after the one whose head it loaded, can
// carry an earlier time than that record (seen: 9-411 ns back in a stress
// run), so the stream goes back and the reader's merge hands events out of
// order. The fence costs ~15 ns here (an enabled write 11 -> 25 ns), so it
// is taken only where the race can be: when another thread wrote the
// ring's last record (the head names it), and on the slow path.
SPOOR_ALWAYS_INLINE uint64_t ring_ticks_after_head_load() {
#if defined(__x86_64__) && !defined(SPOOR_PORT_HOOKS)
  __builtin_ia32_lfence();
#endif
  return spoor_port_ticks();
}

// Reserves a record with `body_size` bytes after the header. Returns false
// when the event is dropped (ring full, no ring, or too large); the drop is
// counted. Cost on the fast path (measured in bench/RESULTS.md, ~10 ns in
// all on this x86-64 VM): CPU id from the rseq area (~1 ns), the tick read
// (~3-8 ns; its rounding to tick_mask an AND), one load and one lock
// cmpxchg on the CPU's head line.
SPOOR_ALWAYS_INLINE bool ring_reserve(uint32_t body_size, Reservation* out) {
  const RingView& v = g_ring;
  uint32_t cpu = spoor_port_cpu();
  if (SPOOR_UNLIKELY(cpu >= v.cpu_count)) {
    *out = ring_reserve_slow(body_size);
    return out->record != nullptr;
  }
  CpuControl& c = v.cpus[cpu];
  const uint32_t tid = spoor_port_thread() & kTidMask;
  const uint32_t mask = v.subbuf_size - 1;
  uint64_t h = c.head.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t pos = h & kPosMask;
    const uint32_t off = static_cast<uint32_t>(pos) & mask;
    const bool with_tid = static_cast<uint32_t>(h >> kPosBits) != tid;
    const uint32_t size = (format::kRecordHeaderSize + (with_tid ? 4u : 0u) + body_size + 1u) & ~1u;
    // Opening a packet (off == 0) or filling it up goes the slow way.
    if (SPOOR_UNLIKELY(off == 0 || off + size >= v.subbuf_size)) {
      *out = ring_reserve_slow(body_size);
      return out->record != nullptr;
    }
    const uint64_t ticks = (with_tid ? ring_ticks_after_head_load() : spoor_port_ticks()) & v.tick_mask;
    const uint64_t next = ((pos + size) & kPosMask) | (uint64_t{tid} << kPosBits);
    // acq_rel: acquiring the previous writer's head carries forward the
    // drainer's release of this packet (the zeroing happened before we write);
    // releasing hands the same to the next writer.
    if (SPOOR_LIKELY(c.head.compare_exchange_weak(h, next, std::memory_order_acq_rel,
                                                  std::memory_order_relaxed))) {
      uint8_t* rec = v.data + (uint64_t{cpu} << v.ring_shift) +
                     (pos & ((uint64_t{1} << v.ring_shift) - 1));
      // Built whole and assigned once, so it stays in registers.
      *out = Reservation{rec, rec + format::kRecordHeaderSize + (with_tid ? 4u : 0u), size, tid,
                         with_tid, ticks};
      return true;
    }
  }
}

// Fills in the header and publishes the record: everything before the final
// release store of the size is visible to a drainer that sees the size.
SPOOR_ALWAYS_INLINE void ring_commit(const Reservation& r, uint16_t key_and_flags) {
  uint8_t* p = r.record;
  const uint64_t key = key_and_flags | (r.with_tid ? format::kKeyHasTid : 0u);
  // Bytes 2..9 in one store: the key, then the low 48 bits of the time.
  const uint64_t word = key | (r.ticks << 16);
  __builtin_memcpy(p + 2, &word, 8);
  if (r.with_tid) __builtin_memcpy(p + 10, &r.tid, 4);
  __atomic_store_n(reinterpret_cast<uint16_t*>(p), static_cast<uint16_t>(r.size), __ATOMIC_RELEASE);
}

#endif  // SPOOR_SINGLE_CORE

// ---------------------------------------------------------------------------
// Drainer side: one drainer per ring (a thread, another process, or the
// firmware's dump routine).
// ---------------------------------------------------------------------------

struct Packet {
  uint32_t cpu;
  uint32_t span;          // bytes of the sub-buffer to clear on release (>= size)
  uint64_t sequence;
  const uint8_t* data;
  uint32_t size;          // bytes of records
  uint32_t record_count;
  uint64_t begin_ticks;   // full timestamps
  uint64_t end_ticks;
  uint64_t lost_total;    // `lost` of the CPU when the packet was taken
};

// Looks at the oldest unreleased packet of `cpu`. now_ticks is a current
// clock reading, used to widen the records' 48-bit times.
// Returns ok (*packet describes it; call ring_release next), empty (no closed
// packet: the open one may hold data, see ring_flush) or busy (closed but a
// record is not committed yet; try again later).
// final = true is for a drain after every writer is gone (the program
// exited or crashed): an uncommitted record then ends the packet and the
// bytes after it count as abandoned (up to where the packet's closing
// writer said it ends; none where that writer died first), so the call
// never returns busy.
Status ring_peek(const RingView& v, uint32_t cpu, uint64_t now_ticks, bool final, Packet* packet);

// Frees the packet ring_peek returned: zeroes it (a zero size marks
// uncommitted records) and hands it back to the writers.
void ring_release(const RingView& v, uint32_t cpu, const Packet& packet);

// Closes the open packet of `cpu` if it holds data, so the next ring_peek
// returns it; the next writer opens a new one. Returns ok or empty (nothing
// to close). Safe while writers run.
Status ring_flush(const RingView& v, uint32_t cpu);

// Events dropped on `cpu` so far.
inline uint64_t ring_lost(const RingView& v, uint32_t cpu) {
  return v.cpus[cpu].lost.load(std::memory_order_relaxed);
}

}  // namespace spoor

#if SPOOR_SINGLE_CORE
#include "spoor/ring_masked.h"
#endif

#endif  // SPOOR_RING_H
