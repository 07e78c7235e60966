#include "stream_decoder.h"

#include "record_decoder.h"
#include "text.h"

namespace spoor::reader {

StreamDecoder::StreamDecoder(const Trace& trace, const Stream& stream)
    : trace_(&trace), stream_(&stream) {
  const Process* p = trace.process(stream.pid);
  pointer_size_ = p != nullptr ? p->pointer_size : 8;
}

StreamDecoder::Step StreamDecoder::fail(uint64_t offset, const std::string& where,
                                        const std::string& problem) {
  const Packet& p = stream_->packets[packet_];
  damage_ = Damage{offset,
                   "stream " + num(stream_->id) + ", packet " + num(p.sequence) + " (cpu " +
                       num(p.cpu) + ")" + where + ": " + problem,
                   stream_->id};
  done_ = true;
  return Step::kDamage;
}

StreamDecoder::Step StreamDecoder::next(Event& out) {
  while (!done_) {
    if (!in_packet_) {
      if (packet_ >= stream_->packets.size()) break;
      pos_ = 0;
      records_ = 0;
      in_packet_ = true;
    }
    const Packet& p = stream_->packets[packet_];
    // A compressed packet's records have no file offset of their own:
    // they are named by their place in the packet and the block holding it.
    const uint64_t offset = p.compressed ? p.offset : p.data_offset + pos_;
    auto where = [&] {
      return ", record " + num(records_) +
             (p.compressed ? " (byte " + num(pos_) + " of its records, in the COMPRESSED block at byte " +
                                 num(p.offset) + ")"
                           : " at byte " + num(offset));
    };
    if (pos_ == p.data_size) {
      if (records_ != p.record_count)
        return fail(p.offset, ", record " + num(records_) + " at byte " + num(p.offset),
                    "its header counts " + num(p.record_count) + " records but its data holds " +
                        num(records_));
      in_packet_ = false;
      ++packet_;
      continue;
    }
    RecordInput in{trace_, stream_, &p, pointer_size_, p.records + pos_, offset, p.data_size - pos_,
                   records_ == 0, previous_ticks_};
    std::string problem;
    const uint32_t size = decode_record(in, tid_, out, problem);
    if (size == 0) return fail(offset, where(), problem);
    pos_ += size;
    ++records_;
    previous_ticks_ = out.ticks;
    return Step::kEvent;
  }
  done_ = true;
  return Step::kEnd;
}

}  // namespace spoor::reader
