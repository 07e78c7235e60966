// Moving a ring's packets into a trace: the one loop every drainer runs (a
// hosted session's writer thread, spoor record, a firmware dump).
#ifndef SPOOR_DRAIN_H
#define SPOOR_DRAIN_H

#include <stdint.h>

#include "spoor/ring.h"
#include "spoor/trace_writer.h"

namespace spoor {

struct DrainTotals {
  uint64_t events = 0;           // records written
  uint64_t packets = 0;          // packets written
  uint64_t lost = 0;             // set by end_streams
  uint64_t abandoned_bytes = 0;  // set by end_streams
  bool busy = false;             // a packet held an uncommitted record (try again)
  Status status = Status::ok;    // the first write that failed, else ok
};

// Packets (128 KiB each by default) a CPU gives up per turn: drainers take
// the CPUs in turns until none has a closed packet left. Emptying one CPU
// before looking at the next let a writer who keeps its ring busy hold the
// drainer there while the other rings filled: spoor record on 2 CPUs was
// seen chasing one ring for 328 ms (614 packets) while the other
// overflowed (bench/RESULTS.md, "Kept: the drain takes the rings in turns").
inline constexpr uint32_t kDrainTurnPackets = 4;

// One turn of every CPU of `ring`: up to kDrainTurnPackets closed packets
// each, written as stream `first_stream + cpu`, then released.
// before_packet() runs before each packet is written: a drainer that
// describes events lazily does it there, so descriptors always precede the
// packets that use them. final: see ring_peek. Returns whether some CPU
// gave a whole turn (it may have more). A drainer of several rings (one per
// traced process) gives each its own range of stream IDs and takes the
// rings in turns as well.
template <class BeforePacket>
  requires requires(BeforePacket f) { f(); }
bool drain_ring_turn(const RingView& ring, TraceWriter& writer, bool final, DrainTotals& totals,
                     BeforePacket before_packet, uint32_t first_stream = 0) {
  bool more = false;
  for (uint32_t cpu = 0; cpu < ring.cpu_count; ++cpu) {
    uint32_t taken = 0;
    for (; taken < kDrainTurnPackets; ++taken) {
      Packet packet;
      const Status s = ring_peek(ring, cpu, spoor_port_ticks(), final, &packet);
      if (s == Status::busy) totals.busy = true;
      if (s != Status::ok) break;
      before_packet();
      if (packet.size > 0) {
        const Status w = writer.packet(first_stream + cpu, packet);
        if (w != Status::ok && totals.status == Status::ok) totals.status = w;
        totals.events += packet.record_count;
        totals.packets++;
      }
      ring_release(ring, cpu, packet);
    }
    more = more || taken == kDrainTurnPackets;
  }
  return more;
}

// Writes every closed packet of every CPU of `ring` (drain_ring_turn until
// no CPU has one left).
template <class BeforePacket>
  requires requires(BeforePacket f) { f(); }
void drain_ring(const RingView& ring, TraceWriter& writer, bool final, DrainTotals& totals,
                BeforePacket before_packet, uint32_t first_stream = 0) {
  while (drain_ring_turn(ring, writer, final, totals, before_packet, first_stream)) {
  }
}

inline void drain_ring(const RingView& ring, TraceWriter& writer, bool final, DrainTotals& totals,
                       uint32_t first_stream = 0) {
  drain_ring(ring, writer, final, totals, [] {}, first_stream);
}

// Closes the open packet of every CPU so the next drain takes it.
inline void flush_ring(const RingView& ring) {
  for (uint32_t cpu = 0; cpu < ring.cpu_count; ++cpu) ring_flush(ring, cpu);
}

// Writes each stream's STREAM_END with its lost count and abandoned bytes,
// adding them to totals; lost_per_cpu (cpu_count entries) may be null.
inline void end_streams(const RingView& ring, TraceWriter& writer, DrainTotals& totals,
                        uint64_t* lost_per_cpu = nullptr, uint32_t first_stream = 0) {
  for (uint32_t cpu = 0; cpu < ring.cpu_count; ++cpu) {
    const CpuControl& c = ring.cpus[cpu];
    const uint64_t lost = ring_lost(ring, cpu);
    if (lost_per_cpu != nullptr) lost_per_cpu[cpu] = lost;
    totals.lost += lost;
    totals.abandoned_bytes += c.abandoned_bytes;
    const Status w = writer.stream_end(first_stream + cpu, lost, c.abandoned_bytes, c.packets);
    if (w != Status::ok && totals.status == Status::ok) totals.status = w;
  }
}

}  // namespace spoor

#endif  // SPOOR_DRAIN_H
