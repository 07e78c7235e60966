// EventReader: every event of a trace in time order. A k-way merge over the
// streams (each already in time order: packets by sequence, records in
// packet order), keyed by the widened tick count.
#ifndef SPOOR_READER_EVENT_READER_H
#define SPOOR_READER_EVENT_READER_H

#include <cstdint>
#include <memory>
#include <vector>

#include "spoor/reader/event.h"
#include "spoor/reader/model.h"
#include "spoor/reader/trace.h"

namespace spoor::reader {

class EventReader {
 public:
  // `trace` must outlive the reader and the events it hands out.
  explicit EventReader(const Trace& trace);
  EventReader(EventReader&&) noexcept;
  EventReader& operator=(EventReader&&) noexcept;
  ~EventReader();

  // Fills `out` with the next event; false when every stream is done.
  // Reusing one `out` across calls reuses its field storage.
  // A bad record (running past its packet, a bad size, an event key with no
  // descriptor, a field running past the record...) ends its stream only:
  // it is added to damages() and the other streams go on.
  bool next(Event& out);

  // Record damage met so far, in the order it was met. The trace's block
  // damage (Trace::damage()) is not repeated here.
  const std::vector<Damage>& damages() const;

  // Events handed out so far, in all streams or in one.
  uint64_t events_read() const;
  uint64_t events_read(uint32_t stream_id) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_EVENT_READER_H
