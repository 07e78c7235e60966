#include "stream_decoder.h"

#include "record_decoder.h"
#include "spoor/format.h"
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

bool StreamDecoder::between_packets(uint64_t& begin_ticks) const {
  if (done_) return false;
  size_t next = packet_;
  if (in_packet_) {
    // The packet's last record is decoded; its count is checked when the
    // next one is entered.
    if (pos_ != stream_->packets[packet_].data_size) return false;
    next = packet_ + 1;
  }
  if (next >= stream_->packets.size()) return false;
  begin_ticks = stream_->packets[next].begin_ticks;
  return true;
}

bool StreamDecoder::enter_packet(const Packet& p) {
  if (!p.compressed()) {
    records_at_ = p.records;
    release();  // the handed-out event, if in it, is held by EventReader
    return true;
  }
  const Trace::Data& d = *trace_->data_;
  if (expansion_ == nullptr || expansion_container_ != p.container) {
    expansion_ = expand_container(d, p.container);
    expansion_container_ = p.container;
  }
  if (!expansion_->problem.empty()) {
    fail(p.offset, "",
         "the COMPRESSED block at byte " + num(p.offset) + " cannot be expanded for its records: " +
             expansion_->problem);
    return false;
  }
  const uint64_t block_at = p.records_at - sizeof(format::BlockHeader) - sizeof(format::PacketBlock);
  if (expansion_->bad(block_at)) {
    fail(p.offset, "",
         "CRC mismatch in block at byte " + num(block_at) + " (PACKET) inside the COMPRESSED block at byte " +
             num(p.offset) + " (offsets count from the start of the blocks it expands to)");
    return false;
  }
  records_at_ = expansion_->bytes.data() + p.records_at;
  return true;
}

StreamDecoder::Step StreamDecoder::next(Event& out) {
  while (!done_) {
    if (!in_packet_) {
      if (packet_ >= stream_->packets.size()) break;
      pos_ = 0;
      records_ = 0;
      in_packet_ = true;
      if (!enter_packet(stream_->packets[packet_])) return Step::kDamage;
    }
    const Packet& p = stream_->packets[packet_];
    // A compressed packet's records have no file offset of their own:
    // they are named by their place in the packet and the block holding it.
    const uint64_t offset = p.compressed() ? p.offset : p.data_offset + pos_;
    auto where = [&] {
      return ", record " + num(records_) +
             (p.compressed() ? " (byte " + num(pos_) + " of its records, in the COMPRESSED block at byte " +
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
    RecordInput in{trace_, stream_, &p, pointer_size_, records_at_ + pos_, offset, p.data_size - pos_,
                   records_ == 0, previous_ticks_, &descriptors_};
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
