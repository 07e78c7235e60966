// Records with an explicit timestamp: the kernel says when a sample or a
// switch happened, so its Spoor.Kernel record carries that time, not the
// time the recorder drained it. The core's write path always stamps the
// current ticks (and stays as it is); this builds the packets of one
// stream directly in the record format of spoor/format.h and hands them to
// the TraceWriter. Hosted, single-threaded: the recorder's drain loop owns it.
#ifndef SPOOR_KERNELSRC_KERNEL_STREAM_H
#define SPOOR_KERNELSRC_KERNEL_STREAM_H

#include <cstdint>
#include <vector>

#include "spoor/event.h"
#include "spoor/trace_writer.h"

namespace spoor::kernelsrc {

class KernelStream {
 public:
  // stream_id: the STREAM block (written by the caller) this stream's
  // packets belong to; tid: the thread id written in each packet's first
  // record (the recorder's: the subject's pid/tid are fields).
  KernelStream(uint32_t stream_id, uint32_t cpu, uint32_t tid, uint32_t packet_bytes = 64u << 10);

  // Appends one record of `event` at `ticks` (the trace's tick clock).
  // The event must be registered (its key non-zero); a record the format
  // cannot hold (over kMaxRecordSize) is counted as lost instead.
  template <Provider* P, uint8_t L, uint64_t K, class... T>
  void append(TraceWriter& writer, const Event<P, L, K, T...>& event, uint64_t ticks,
              typename FieldTraits<T>::arg... values) {
    const uint32_t fields = (0u + ... + FieldTraits<T>::size(values));
    uint8_t* p = begin_record(writer, *event.key, ticks, fields);
    if (p == nullptr) return;
    (FieldTraits<T>::store(p, values), ...);
  }

  // Adds `count` to the stream's lost total (records the kernel dropped).
  void add_lost(uint64_t count) { lost_ += count; }
  uint64_t lost() const { return lost_; }
  uint64_t records() const { return records_; }

  // Writes the open packet, if it holds records. Returns the writer's status.
  Status flush(TraceWriter& writer);
  // Flushes, then writes the STREAM_END block.
  Status end(TraceWriter& writer);

 private:
  uint8_t* begin_record(TraceWriter& writer, uint16_t key, uint64_t ticks, uint32_t fields_size);

  uint32_t stream_id_, cpu_, tid_, packet_bytes_;
  std::vector<uint8_t> data_;
  uint32_t count_ = 0;          // records in the open packet
  uint64_t begin_ticks_ = 0, end_ticks_ = 0;
  uint64_t sequence_ = 0, lost_ = 0, records_ = 0;
};

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KERNEL_STREAM_H
