// StreamDecoder: the records of one stream in order (packets by sequence,
// records in packet order), stopping for good at the first bad one.
#ifndef SPOOR_READER_STREAM_DECODER_H
#define SPOOR_READER_STREAM_DECODER_H

#include <cstdint>
#include <memory>

#include "spoor/reader/event.h"
#include "spoor/reader/trace.h"
#include "record_decoder.h"
#include "trace_data.h"

namespace spoor::reader {

class StreamDecoder {
 public:
  StreamDecoder(const Trace& trace, const Stream& stream);

  enum class Step { kEvent, kEnd, kDamage };
  // kEvent: `out` holds the next event. kEnd: the stream is done.
  // kDamage: damage() says why the stream stops here; later calls give kEnd.
  Step next(Event& out);
  const Damage& damage() const { return damage_; }
  const Stream& stream() const { return *stream_; }
  // The expanded COMPRESSED block the last event's strings and blobs point
  // into (null for a packet stored plainly): whoever keeps that event must
  // keep this.
  const std::shared_ptr<const Expansion>& holding() const { return expansion_; }

  // Whether the next record is the first of a packet not entered yet, and
  // then that packet's first time stamp (`begin_ticks`): a merge can order
  // the stream by it without expanding the block the packet is in.
  bool between_packets(uint64_t& begin_ticks) const;
  // Lets go of the expanded block of the packet just finished.
  void release() {
    expansion_.reset();
    expansion_container_ = kNoContainer;
  }

 private:
  Step fail(uint64_t offset, const std::string& where, const std::string& problem);
  // Where the current packet's records are; false after fail().
  bool enter_packet(const Packet& p);

  const Trace* trace_;
  const Stream* stream_;
  uint32_t pointer_size_;
  KeyDescriptors descriptors_;
  size_t packet_ = 0;        // index into stream_->packets
  bool in_packet_ = false;
  uint64_t pos_ = 0;         // of the next record, from the packet's first record
  uint32_t records_ = 0;     // decoded in this packet
  uint32_t tid_ = 0;
  uint64_t previous_ticks_ = 0;  // of the last record decoded (short records widen against it)
  const uint8_t* records_at_ = nullptr;  // the current packet's records
  std::shared_ptr<const Expansion> expansion_;  // what they are in, for a compressed packet
  uint32_t expansion_container_ = kNoContainer;
  bool done_ = false;
  Damage damage_;
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_STREAM_DECODER_H
