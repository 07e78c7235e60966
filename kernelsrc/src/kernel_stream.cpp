#include "spoor/kernelsrc/kernel_stream.h"

#include <cstring>

#include "spoor/format.h"

namespace spoor::kernelsrc {

KernelStream::KernelStream(uint32_t stream_id, uint32_t cpu, uint32_t tid, uint32_t packet_bytes)
    : stream_id_(stream_id), cpu_(cpu), tid_(tid), packet_bytes_(packet_bytes) {
  data_.reserve(packet_bytes_ + format::kMaxRecordSize);
}

uint8_t* KernelStream::begin_record(TraceWriter& writer, uint16_t key, uint64_t ticks, uint32_t fields_size) {
  // The first record of a packet names the thread (format.h); the rest
  // inherit it. The reader widens each 48-bit time against begin_ticks with
  // a signed difference, so a packet never spans more than 2^47 ticks.
  uint64_t header = format::kRecordHeaderSize + (count_ == 0 ? 4 : 0);
  uint64_t size = (header + fields_size + 1) & ~uint64_t{1};
  if (count_ > 0 && (data_.size() + size > packet_bytes_ + 4 ||
                     (ticks > begin_ticks_ ? ticks - begin_ticks_ : begin_ticks_ - ticks) >= (1ull << 46))) {
    flush(writer);
    header += 4;
    size = (header + fields_size + 1) & ~uint64_t{1};
  }
  if (key == 0 || size > format::kMaxRecordSize) {
    ++lost_;
    return nullptr;
  }
  const size_t at = data_.size();
  data_.resize(at + size);
  uint8_t* p = data_.data() + at;
  if (size > header + fields_size) p[size - 1] = 0;  // the padding byte
  const uint16_t size16 = static_cast<uint16_t>(size);
  const uint16_t key16 = static_cast<uint16_t>(key | (count_ == 0 ? format::kKeyHasTid : 0));
  std::memcpy(p, &size16, 2);
  std::memcpy(p + 2, &key16, 2);
  const uint64_t time48 = ticks & format::kTimeMask48;
  std::memcpy(p + 4, &time48, 6);
  if (count_ == 0) {
    std::memcpy(p + 10, &tid_, 4);
    begin_ticks_ = ticks;
  }
  end_ticks_ = ticks;
  ++count_;
  ++records_;
  return p + header;
}

Status KernelStream::flush(TraceWriter& writer) {
  if (count_ == 0) return Status::ok;
  Packet packet{};
  packet.cpu = cpu_;
  packet.sequence = sequence_++;
  packet.data = data_.data();
  packet.size = static_cast<uint32_t>(data_.size());
  packet.span = packet.size;
  packet.record_count = count_;
  packet.begin_ticks = begin_ticks_;
  packet.end_ticks = end_ticks_;
  packet.lost_total = lost_;
  const Status s = writer.packet(stream_id_, packet);
  data_.clear();
  count_ = 0;
  return s;
}

Status KernelStream::end(TraceWriter& writer) {
  const Status s = flush(writer);
  const Status e = writer.stream_end(stream_id_, lost_, 0, sequence_);
  return s != Status::ok ? s : e;
}

}  // namespace spoor::kernelsrc
