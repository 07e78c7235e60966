// Ring layout, the writer's slow path, and the drainer side.
#include "spoor/ring.h"

namespace spoor {

constinit RingView g_ring{};

namespace {

// Layout arithmetic in the target's word: a span on a 32-bit target is
// smaller than 4 GiB, and ring_init bounds its inputs first so that no sum
// below can wrap (on a Cortex-M, 64-bit arithmetic would double ring_init).
using LayoutInt = size_t;

constexpr bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// log2 of a power of two (callers have checked that it is one). A loop
// unless the target counts zeros in one instruction: elsewhere
// __builtin_ctz is a libgcc call, which some bare-metal links lack
// (riscv64-unknown-elf).
uint32_t log2_exact(uint32_t v) {
#if defined(__ARM_FEATURE_CLZ) || defined(__x86_64__) || defined(__aarch64__)
  return static_cast<uint32_t>(__builtin_ctz(v));
#else
  uint32_t s = 0;
  while ((uint32_t{1} << s) < v) ++s;
  return s;
#endif
}

// Int: LayoutInt in ring_init (bounded inputs), uint64_t where a header
// from elsewhere is checked (ring_open) or a size is asked for.
template <class Int>
struct Layout {
  Int cpu_offset, packet_end_offset, data_offset, total;
};

template <class Int = LayoutInt>
Layout<Int> layout_for(uint32_t cpu_count, uint32_t subbuf_size, uint32_t subbuf_count) {
  Layout<Int> l{};
  l.cpu_offset = sizeof(RingHeader);
  l.packet_end_offset = l.cpu_offset + Int{cpu_count} * sizeof(CpuControl);
  l.data_offset = (l.packet_end_offset + Int{cpu_count} * subbuf_count * 4 + 63) & ~Int{63};
  l.total = l.data_offset + Int{cpu_count} * subbuf_count * subbuf_size;
  return l;
}

template <class Int>
void fill_view(uint8_t* base, const Layout<Int>& l, uint32_t cpu_count, uint32_t subbuf_shift,
               uint32_t subbuf_count, RingView* v) {
  v->cpus = reinterpret_cast<CpuControl*>(base + l.cpu_offset);
  v->packet_end = reinterpret_cast<uint32_t*>(base + l.packet_end_offset);
  v->data = base + l.data_offset;
  v->cpu_count = cpu_count;
  v->subbuf_shift = subbuf_shift;
  v->subbuf_size = 1u << subbuf_shift;
  v->subbuf_count = subbuf_count;
  v->ring_shift = subbuf_shift + log2_exact(subbuf_count);
  v->ring_mask = (uint32_t{1} << v->ring_shift) - 1;
  v->subbuf_mask = v->subbuf_size - 1;
}

inline uint32_t* packet_end_slot(const RingView& v, uint32_t cpu, uint64_t pos) {
  const uint64_t slot = (pos >> v.subbuf_shift) & (v.subbuf_count - 1);
  return v.packet_end + uint64_t{cpu} * v.subbuf_count + slot;
}

inline uint8_t* packet_data(const RingView& v, uint32_t cpu, uint64_t pos) {
  const uint64_t ring_mask = (uint64_t{1} << v.ring_shift) - 1;
  const uint64_t packet_start = pos & ~uint64_t{v.subbuf_size - 1};
  return v.data + (uint64_t{cpu} << v.ring_shift) + (packet_start & ring_mask);
}

// Sign-extends a 48-bit difference.
inline int64_t signed48(uint64_t d) {
  return static_cast<int64_t>(d << 16) >> 16;
}

#if !SPOOR_SINGLE_CORE
constexpr uint64_t kNoSkip = ~uint64_t{0};

// Where a writer opening the packet at `start` puts it: at the start of the
// next lap when the drainer is right behind, else at `start`.
//
// A ring is sized for bursts (a drainer stalled on fresh pages: 32 MiB per
// CPU under spoor record), but most of the time the drainer is a packet or
// two behind. Going round the whole ring anyway spreads the writes over
// megabytes the caches cannot hold, and every page of it stays in the
// traced process's memory: with 4 MiB rings instead of 16, malloc_heavy's
// loop ran ~20% faster (bench/RESULTS.md, "Tried and left out: 4 MiB rings
// by default"), but overflowed when the drainer stalled. Going back to the
// lap's start keeps the writes in the ring's first 4 MiB while the drainer
// keeps up, and the whole ring for when it does not.
//
// The writer goes back once it is kRingRewindAfter into a ring of four times
// that or more, and only if the drainer has released everything before
// the packet being closed (at most one packet from `consumed` to `start`).
// Until the drainer has taken that packet and passed the skipped rest of
// the lap, the writer has only what lies before `consumed`: that much of a
// stall is all it then rides out without dropping. Going back at an
// eighth of a 16 MiB ring, or with the drainer two packets behind, lost
// events where the drainer stalled, and so did a 4 MiB ring going back
// at 1 MiB at 10 M events/s (bench/RESULTS.md, "The writers go back to the
// ring's start"). A larger ring goes back at the same 4 MiB: it keeps the
// same footprint while the drainer keeps up, and more room for when it
// does not (spoor record's 32 MiB rings). The skipped packets were
// released (zeroed) or never written; the first of them gets
// kSkipToNextLap as its end, which sends ring_peek on to the next lap.
inline uint64_t rewind_target(const RingView& v, uint64_t start, uint64_t consumed) {
  const uint64_t ring_bytes = uint64_t{1} << v.ring_shift;
  const uint64_t into_lap = start & (ring_bytes - 1);
  if (!ring_goes_back(ring_bytes) || into_lap < kRingRewindAfter ||
      ((start - consumed) & kPosMask) > v.subbuf_size)
    return start;
  // Free: consumed is at most a packet (1 MiB at most) back, in this lap,
  // so the next lap's first packet (this lap's, 4 MiB or more before it)
  // is released.
  return (start - into_lap + ring_bytes) & kPosMask;
}

// Raises the CPU's high-water mark (bytes into a lap any packet has reached)
// to `reach`; true if it was below. Two writers racing may both see true:
// first_use is then called twice for a packet, which costs a system call.
inline bool reaches_further(CpuControl& c, uint64_t reach) {
  uint64_t seen = __atomic_load_n(&c.furthest, __ATOMIC_RELAXED);
  while (seen < reach) {
    if (__atomic_compare_exchange_n(&c.furthest, &seen, reach, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return true;
  }
  return false;
}
#endif

}  // namespace

size_t ring_bytes_needed(uint32_t cpu_count, uint32_t subbuf_size, uint32_t subbuf_count) {
  return static_cast<size_t>(layout_for<uint64_t>(cpu_count, subbuf_size, subbuf_count).total);
}

Status ring_init(void* memory, size_t size, uint32_t cpu_count, uint32_t subbuf_size,
                 RingView* view, bool memory_is_zero) {
  if (memory == nullptr || view == nullptr || cpu_count == 0 ||
      reinterpret_cast<uintptr_t>(memory) % 64 != 0 || !is_pow2(subbuf_size) ||
      subbuf_size < kMinSubbufSize || subbuf_size > kMaxSubbufSize)
    return Status::invalid_argument;
  // Bounds that keep layout_for exact in a 32-bit size_t: at most half the
  // address space, and two packets per CPU no larger than the span (then
  // every term of a layout that is tested below is at most `size`).
  if (size > (SIZE_MAX >> 1)) size = SIZE_MAX >> 1;
  const uint32_t shift = log2_exact(subbuf_size);
  if (cpu_count > (size >> (shift + 1))) return Status::out_of_space;
  uint32_t count = 2;
  if (layout_for(cpu_count, subbuf_size, count).total > size) return Status::out_of_space;
  // Doubling stays exact while the packets take at most half the span.
  while (count < (1u << 20) && (LayoutInt{cpu_count} * count << shift) <= (size >> 1) &&
         layout_for(cpu_count, subbuf_size, count * 2).total <= size &&
         (sizeof(LayoutInt) < 8 || uint64_t{subbuf_size} * count * 2 <= (kPosMask >> 1)))
    count *= 2;
  const Layout<LayoutInt> l = layout_for(cpu_count, subbuf_size, count);
  auto* h = static_cast<RingHeader*>(memory);
  // Records are committed by storing their size over a zero: the data must
  // start zeroed. Fresh pages (a new memfd) already are, and writing them
  // here would fault in the whole ring.
  __builtin_memset(memory, 0, memory_is_zero ? l.data_offset : l.total);
  h->magic = kRingMagic;
  h->version = kRingVersion;
  h->cpu_count = cpu_count;
  h->subbuf_shift = shift;
  h->subbuf_count = count;
  h->cpu_offset = l.cpu_offset;
  h->packet_end_offset = l.packet_end_offset;
  h->data_offset = l.data_offset;
  h->total_size = l.total;
  fill_view(static_cast<uint8_t*>(memory), l, cpu_count, shift, count, view);
  return Status::ok;
}

Status ring_open(void* memory, size_t size, RingView* view) {
  if (memory == nullptr || view == nullptr || size < sizeof(RingHeader))
    return Status::invalid_argument;
  auto* h = static_cast<RingHeader*>(memory);
  if (h->magic != kRingMagic || h->version != kRingVersion || h->cpu_count == 0 ||
      h->subbuf_shift < 8 || h->subbuf_shift > 20 || !is_pow2(h->subbuf_count))
    return Status::invalid_argument;
  const Layout<uint64_t> l = layout_for<uint64_t>(h->cpu_count, 1u << h->subbuf_shift, h->subbuf_count);
  if (l.total > size || l.total != h->total_size || l.data_offset != h->data_offset ||
      l.cpu_offset != h->cpu_offset || l.packet_end_offset != h->packet_end_offset)
    return Status::invalid_argument;
  fill_view(static_cast<uint8_t*>(memory), l, h->cpu_count, h->subbuf_shift, h->subbuf_count, view);
  return Status::ok;
}

void ring_install(const RingView& view) {
#if SPOOR_SINGLE_CORE
  // One core: with interrupts masked no writer can see a half-copied view.
  IrqMask mask;
  g_ring = view;
#else
  // Fields first, cpu_count last: a writer that sees it non-zero sees
  // pointers that belong to the same view. Swapping between two live rings
  // is not supported (sessions install once and detach at stop).
  RingView& g = g_ring;
  __atomic_store_n(&g.cpu_count, 0u, __ATOMIC_RELEASE);
  g.cpus = view.cpus;
  g.packet_end = view.packet_end;
  g.data = view.data;
  g.subbuf_shift = view.subbuf_shift;
  g.subbuf_size = view.subbuf_size;
  g.subbuf_count = view.subbuf_count;
  g.ring_shift = view.ring_shift;
  g.ring_mask = view.ring_mask;
  g.subbuf_mask = view.subbuf_mask;
  g.first_use = view.first_use;
  g.when_full = view.when_full;
  g.tick_mask = view.tick_mask;
  __atomic_store_n(&g.cpu_count, view.cpu_count, __ATOMIC_RELEASE);
#endif
}

#if !SPOOR_SINGLE_CORE  // else src/ring_masked.cpp
Reservation ring_reserve_slow(uint32_t body_size) {
  const RingView& v = g_ring;
  const uint32_t cpu_count = __atomic_load_n(&v.cpu_count, __ATOMIC_ACQUIRE);
  if (cpu_count == 0) return Reservation{};  // no ring: nothing recorded, nothing to count into
  uint32_t cpu = spoor_port_cpu();
  if (cpu >= cpu_count) cpu %= cpu_count;
  CpuControl& c = v.cpus[cpu];
  const uint32_t tid = spoor_port_thread() & kTidMask;
  const uint32_t S = v.subbuf_size;
  const uint64_t ring_bytes = uint64_t{1} << v.ring_shift;
  uint64_t h = c.head.load(std::memory_order_relaxed);
  uint32_t asked = 0;  // when_full's calls for this record
  for (;;) {
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
      c.lost.fetch_add(1, std::memory_order_relaxed);  // can never fit
      return Reservation{};
    }
    uint64_t skipped = kNoSkip;  // where a rewind leaves the lap: its packet_end gets kSkipToNextLap
    if (opening) {
      // The packet at `start` is free once the drainer released it. Acquire
      // pairs with the drainer's release: its zeroing happened before we write.
      const uint64_t consumed = c.consumed.load(std::memory_order_acquire);
      const uint64_t lap_start = rewind_target(v, start, consumed);
      if (lap_start != start) {
        skipped = start;
        start = lap_start;
      }
      if (((start - consumed) & kPosMask) >= ring_bytes) {
        // Ring full: drop, unless the host waits for its drainer (and then
        // the head may have moved meanwhile).
        if (v.when_full != nullptr && v.when_full(++asked)) {
          h = c.head.load(std::memory_order_relaxed);
          continue;
        }
        c.lost.fetch_add(1, std::memory_order_relaxed);
        return Reservation{};
      }
    }
    const uint64_t end = (start + size) & kPosMask;
    const uint64_t ticks = ring_ticks_after_head_load() & v.tick_mask;
    const uint64_t next = end | (uint64_t{tid} << kPosBits);
    if (!c.head.compare_exchange_weak(h, next, std::memory_order_acq_rel,
                                      std::memory_order_relaxed))
      continue;
    // Closing stores release: the drainer that reads a packet's end with
    // acquire also sees the reservation that closed it.
    if (closes_current) __atomic_store_n(packet_end_slot(v, cpu, pos), off, __ATOMIC_RELEASE);
    if (skipped != kNoSkip) __atomic_store_n(packet_end_slot(v, cpu, skipped), kSkipToNextLap, __ATOMIC_RELEASE);
    if ((end & (S - 1)) == 0) __atomic_store_n(packet_end_slot(v, cpu, start), S, __ATOMIC_RELEASE);
    uint8_t* rec = packet_data(v, cpu, start) + (start & (S - 1));
    // Once per packet, the first time a writer goes that far into the ring:
    // afterwards its pages are mapped.
    if (opening && reaches_further(c, (start & (ring_bytes - 1)) + S) && v.first_use != nullptr)
      v.first_use(packet_data(v, cpu, start), S);
    return Reservation{rec, rec + format::kRecordHeaderSize + (with_tid ? 4u : 0u), size, tid,
                       with_tid, ticks};
  }
}
#endif

Status ring_flush(const RingView& v, uint32_t cpu) {
  if (cpu >= v.cpu_count) return Status::invalid_argument;
  CpuControl& c = v.cpus[cpu];
  const uint32_t S = v.subbuf_size;
  uint64_t h = c.head.load(std::memory_order_acquire);
  for (;;) {
    const uint64_t pos = h & kPosMask;
    const uint32_t off = static_cast<uint32_t>(pos) & (S - 1);
    if (off == 0) return Status::empty;
    const uint64_t next = ((pos - off + S) & kPosMask) | (h & ~kPosMask);
    if (c.head.compare_exchange_weak(h, next, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      __atomic_store_n(packet_end_slot(v, cpu, pos), off, __ATOMIC_RELEASE);
      return Status::ok;
    }
  }
}

Status ring_peek(const RingView& v, uint32_t cpu, uint64_t now_ticks, bool final, Packet* packet) {
  if (cpu >= v.cpu_count || packet == nullptr) return Status::invalid_argument;
  CpuControl& c = v.cpus[cpu];
  const uint32_t S = v.subbuf_size;
  uint64_t consumed = c.consumed.load(std::memory_order_relaxed);  // ours alone
  uint32_t end = __atomic_load_n(packet_end_slot(v, cpu, consumed), __ATOMIC_ACQUIRE);
  if (end == kSkipToNextLap) {
    // The writers went back to the start of the ring (rewind_target): the
    // rest of this lap holds nothing. Its packets are zero already.
    __atomic_store_n(packet_end_slot(v, cpu, consumed), 0u, __ATOMIC_RELAXED);
    const uint64_t ring_bytes = uint64_t{1} << v.ring_shift;
    consumed = ((consumed | (ring_bytes - 1)) + 1) & kPosMask;
    c.consumed.store(consumed, std::memory_order_release);
    end = __atomic_load_n(packet_end_slot(v, cpu, consumed), __ATOMIC_ACQUIRE);
  }
  bool end_unknown = false;
  if (end == 0) {
    const uint64_t pos = c.head.load(std::memory_order_acquire) & kPosMask;
    const uint64_t written = (pos - consumed) & kPosMask;
    if (written < S) return Status::empty;  // open (or untouched): ring_flush closes it
    // Closed by a writer that has not stored the end yet.
    if (!final) return Status::busy;
    // The writer is gone: walk until the first uncommitted record.
    end = S;
    end_unknown = true;
  }
  const uint8_t* data = packet_data(v, cpu, consumed);
  const uint64_t now48 = now_ticks & format::kTimeMask48;
  uint32_t off = 0, count = 0;
  uint64_t begin = ~uint64_t{0}, last = 0, prev = 0;
  while (off + 2 <= end) {
    const uint16_t word = __atomic_load_n(reinterpret_cast<const uint16_t*>(data + off),
                                          __ATOMIC_ACQUIRE);
    uint64_t t;
    uint32_t size;
    if (word & format::kShortRecordFlag) {
      // Short record (single-core writers): never first in its packet, its
      // 32-bit time is relative to the previous record's.
      size = word & 0xFE;
      if (count == 0 || size < format::kShortRecordHeaderSize || off + size > end) break;
      uint32_t t32;
      __builtin_memcpy(&t32, data + off + 2, 4);
      t = format::widen_short_ticks(t32, prev);
    } else {
      size = word;
      if (size == 0 || size < format::kRecordHeaderSize || off + size > end) {
        if (!final && size == 0) return Status::busy;  // reserved, not committed yet
        break;
      }
      // Bytes 2..9 (key, then time) as one word: a 6-byte copy into a local
      // would stall on store forwarding, ~4x the cost of this whole loop.
      uint64_t kt;
      __builtin_memcpy(&kt, data + off + 2, 8);
      const uint64_t t48 = kt >> 16;
      t = now_ticks - static_cast<uint64_t>(signed48((now48 - t48) & format::kTimeMask48));
    }
    if (t < begin) begin = t;
    if (t > last) last = t;
    prev = t;
    off += size;
    ++count;
  }
  // Past the walk: space reserved and never committed, with what others
  // committed after it, when a writer stored where the packet ends. Where
  // none did (it died between its reservation and that store, the only way
  // an end stays unknown), the rest may never have been written: a writer
  // that died going back to the ring's start left the rest of the lap
  // unmarked, megabytes no one reserved. Not counted.
  if (off < end && !end_unknown) c.abandoned_bytes += end - off;
  packet->cpu = cpu;
  packet->span = end;
  packet->sequence = c.packets;
  packet->data = data;
  packet->size = off;
  packet->record_count = count;
  packet->begin_ticks = count ? begin : now_ticks;
  packet->end_ticks = count ? last : now_ticks;
  packet->lost_total = c.lost.load(std::memory_order_relaxed);
  return Status::ok;
}

void ring_release(const RingView& v, uint32_t cpu, const Packet& packet) {
  CpuControl& c = v.cpus[cpu];
  const uint64_t consumed = c.consumed.load(std::memory_order_relaxed);
  // Zero what writers used so that sizes read 0 ("uncommitted") when reused.
  __builtin_memset(packet_data(v, cpu, consumed), 0, packet.span);
  __atomic_store_n(packet_end_slot(v, cpu, consumed), 0u, __ATOMIC_RELAXED);
  c.packets++;
  // Release: writers that acquire `consumed` see the zeroed packet.
  c.consumed.store((consumed + v.subbuf_size) & kPosMask, std::memory_order_release);
}

}  // namespace spoor
