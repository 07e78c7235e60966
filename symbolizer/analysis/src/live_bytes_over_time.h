// Bytes live over an image's life, kept in at most kColumns columns of
// equal time whatever the image's length (unknown until its end): each
// column holds the most bytes live at a change within it and the bytes
// live after its last change. A change past the last column doubles the
// columns' width, merging them in pairs, so the columns stay exact (each
// the most of its whole span) and an image of any length costs at most
// kColumns of them (1.5 KiB). A note() is a shift, a compare and three
// stores, bar the merges (at most 63 per image, of 64 columns each).
#ifndef SPOOR_ANALYSIS_LIVE_BYTES_OVER_TIME_H
#define SPOOR_ANALYSIS_LIVE_BYTES_OVER_TIME_H

#include <cstdint>
#include <vector>

#include "spoor/analysis/heap.h"

namespace spoor::analysis {

class LiveBytesOverTime {
 public:
  // Once an image is longer than kColumns / 2 nanoseconds its timeline has
  // between kColumns / 2 and kColumns columns.
  static constexpr size_t kColumns = kHeapTimelineColumns;

  explicit LiveBytesOverTime(int64_t start_ns) : start_ns_(start_ns) {}

  // The bytes live are `live` after a change at `time_ns` (times before
  // the start count as the start). Inline: it runs once per heap event
  // (a 13 M-event heap report took 1.30 s before the timeline, 1.34 s
  // with this out of line, 1.31-1.36 s inline).
  void note(int64_t time_ns, uint64_t live) {
    const uint64_t at = offset(time_ns);
    size_t i = static_cast<size_t>(at >> width_shift_);
    if (i >= columns_.size()) {
      grow_to(at);
      i = static_cast<size_t>(at >> width_shift_);
    }
    Column& c = columns_[i];
    c.most = c.changed && c.most > live ? c.most : live;
    c.last = live;
    c.changed = true;
    if (at > last_offset_) last_offset_ = at;
  }

  // The timeline from the start to `end_ns` (or to the last change, when
  // later), widened to fit: each column the most bytes live at any moment
  // in it, the bytes live on entering it included. Empty when nothing was
  // noted.
  HeapTimeline timeline(int64_t end_ns) const;

 private:
  struct Column {
    uint64_t most = 0;  // of the values noted in the column
    uint64_t last = 0;  // after its last change
    bool changed = false;
  };
  // Nanoseconds from the start, unsigned: any two times' distance fits.
  uint64_t offset(int64_t time_ns) const {
    return time_ns > start_ns_ ? static_cast<uint64_t>(time_ns) - static_cast<uint64_t>(start_ns_) : 0;
  }
  void widen();
  // Makes room for a change at `at` ns from the start: widens the columns
  // until it falls within kColumns of them, then adds those up to it.
  void grow_to(uint64_t at);

  int64_t start_ns_;
  int width_shift_ = 0;  // the columns' width: 2^width_shift_ ns
  uint64_t last_offset_ = 0;  // of the latest change
  std::vector<Column> columns_;  // up to the last changed one
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_LIVE_BYTES_OVER_TIME_H
