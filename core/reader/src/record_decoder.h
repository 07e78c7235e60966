// decode_record: one record of a packet into an Event. Every byte it reads
// is checked against the record's end, and the record's end against the
// packet's end; it never reads past either.
#ifndef SPOOR_READER_RECORD_DECODER_H
#define SPOOR_READER_RECORD_DECODER_H

#include <cstdint>
#include <string>

#include "spoor/reader/event.h"
#include "spoor/reader/trace.h"

namespace spoor::reader {

// One stream's event descriptors by key, each looked up in the trace once:
// the trace's map costs a hash and a division per record, a sixth of the
// record's decoding on heap traces. Direct-mapped; the stream's pid is fixed.
class KeyDescriptors {
 public:
  const EventDescriptor* find(const Trace& trace, uint32_t pid, uint16_t key) {
    Slot& s = slots_[key % kSlots];
    if (s.descriptor != nullptr && s.key == key) return s.descriptor;
    const EventDescriptor* d = trace.event(pid, key);
    if (d != nullptr) s = Slot{key, d};
    return d;
  }

 private:
  static constexpr uint32_t kSlots = 16;
  struct Slot {
    uint16_t key = 0;
    const EventDescriptor* descriptor = nullptr;
  };
  Slot slots_[kSlots];
};

struct RecordInput {
  const Trace* trace = nullptr;
  const Stream* stream = nullptr;
  const Packet* packet = nullptr;
  uint32_t pointer_size = 8;  // of the stream's process
  const uint8_t* record = nullptr;  // its bytes
  uint64_t offset = 0;        // of the record in the file (Event::offset)
  uint64_t available = 0;     // bytes from offset to the packet's end
  bool first_in_packet = false;
  uint64_t previous_ticks = 0;  // full time of the packet's previous record (short records)
  KeyDescriptors* descriptors = nullptr;  // the stream's; required
};

// Decodes the record at in.offset into `out`. `tid` is the packet's current
// thread: read when the record carries one, used when it does not.
// Returns the record's size, or 0 with `problem` saying what is wrong (a
// size below 10 or odd, running past the packet, no thread id on the first
// record, an event key without a descriptor, a field running past the
// record, bytes left after the fields beyond one byte of padding, a short
// record first in its packet).
uint32_t decode_record(const RecordInput& in, uint32_t& tid, Event& out, std::string& problem);

// The full tick count of a record's low 48 bits, against the packet's
// begin_ticks: (time - begin) mod 2^48, read as a signed 48-bit number.
uint64_t widen_ticks(uint64_t time48, uint64_t begin_ticks);

}  // namespace spoor::reader

#endif  // SPOOR_READER_RECORD_DECODER_H
