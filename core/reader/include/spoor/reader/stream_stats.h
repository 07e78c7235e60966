// Per-stream statistics from packet headers alone (no record decoding):
// packet and record counts, missing packets, and where events were lost.
#ifndef SPOOR_READER_STREAM_STATS_H
#define SPOOR_READER_STREAM_STATS_H

#include <cstdint>
#include <vector>

#include "spoor/reader/trace.h"

namespace spoor::reader {

// "N events lost on cpu K between t1 and t2". Packets carry a running
// lost_total, so N is its increase over the previous packet of the stream,
// t1 that packet's end and t2 this packet's end. For losses counted by the
// first packet, t1 is that packet's begin. Losses only the STREAM_END block
// counts happened after the last packet: after_last_packet is set and
// begin_ns == end_ns == the last packet's end.
struct LossInterval {
  uint32_t stream_id = 0;
  uint32_t cpu = 0;
  uint64_t lost = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  bool after_last_packet = false;
};

struct StreamStats {
  uint32_t stream_id = 0;
  uint32_t pid = 0;
  uint32_t cpu = 0;
  uint64_t packets = 0;          // in the file
  uint64_t records = 0;          // as the packet headers count them
  uint64_t lost = 0;             // final: STREAM_END's count, else the last packet's
  uint64_t missing_packets = 0;  // sequence numbers absent from the file
  uint64_t sequence_gaps = 0;    // runs of missing sequence numbers
  uint64_t abandoned_bytes = 0;  // from STREAM_END
  bool ended = false;            // the file has its STREAM_END block
  std::vector<LossInterval> losses;
};

StreamStats stream_stats(const Trace& trace, const Stream& stream);
// One per stream, in the order of Trace::streams().
std::vector<StreamStats> stream_stats(const Trace& trace);

}  // namespace spoor::reader

#endif  // SPOOR_READER_STREAM_STATS_H
