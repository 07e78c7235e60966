// Stream statistics from packet headers: no record is decoded, so these
// numbers are available even for a stream whose records are damaged.
#include "spoor/reader/stream_stats.h"

namespace spoor::reader {

StreamStats stream_stats(const Trace& trace, const Stream& stream) {
  const Clock& clock = trace.clock();
  StreamStats s;
  s.stream_id = stream.id;
  s.pid = stream.pid;
  s.cpu = stream.cpu;
  s.packets = stream.packets.size();
  uint64_t expected = 0;  // the next sequence number if none were missing
  const Packet* prev = nullptr;
  for (const Packet& p : stream.packets) {
    s.records += p.record_count;
    if (p.sequence > expected) {
      s.missing_packets += p.sequence - expected;
      ++s.sequence_gaps;
    }
    if (p.sequence >= expected) expected = p.sequence + 1;
    const uint64_t before = prev != nullptr ? prev->lost_total : 0;
    if (p.lost_total > before) {
      LossInterval loss;
      loss.stream_id = stream.id;
      loss.cpu = p.cpu;
      loss.lost = p.lost_total - before;
      loss.begin_ns = clock.to_ns(prev != nullptr ? prev->end_ticks : p.begin_ticks);
      loss.end_ns = clock.to_ns(p.end_ticks);
      s.losses.push_back(loss);
    }
    // A running count never decreases; if one does, keep the larger so a
    // later packet is not reported as losing the difference twice.
    if (prev == nullptr || p.lost_total >= prev->lost_total) prev = &p;
  }
  s.lost = prev != nullptr ? prev->lost_total : 0;
  if (stream.end) {
    s.ended = true;
    s.abandoned_bytes = stream.end->abandoned_bytes;
    if (stream.end->lost_total > s.lost) {
      LossInterval loss;
      loss.stream_id = stream.id;
      loss.cpu = stream.cpu;
      loss.lost = stream.end->lost_total - s.lost;
      loss.begin_ns = loss.end_ns = prev != nullptr ? clock.to_ns(prev->end_ticks) : 0;
      loss.after_last_packet = true;
      s.losses.push_back(loss);
      s.lost = stream.end->lost_total;
    }
  }
  return s;
}

std::vector<StreamStats> stream_stats(const Trace& trace) {
  std::vector<StreamStats> all;
  all.reserve(trace.streams().size());
  for (const Stream& s : trace.streams()) all.push_back(stream_stats(trace, s));
  return all;
}

}  // namespace spoor::reader
