#include "live_bytes_over_time.h"

#include <algorithm>

namespace spoor::analysis {

void LiveBytesOverTime::grow_to(uint64_t at) {
  while ((at >> width_shift_) >= kColumns) widen();
  columns_.resize(static_cast<size_t>(at >> width_shift_) + 1);
}

// Pairs merge: the most of both; the last of the later one that changed.
void LiveBytesOverTime::widen() {
  const size_t merged = (columns_.size() + 1) / 2;
  for (size_t j = 0; j < merged; ++j) {
    const Column a = columns_[2 * j];
    const Column b = 2 * j + 1 < columns_.size() ? columns_[2 * j + 1] : Column{};
    Column& m = columns_[j];
    m.changed = a.changed || b.changed;
    m.most = a.changed && b.changed ? std::max(a.most, b.most) : (a.changed ? a.most : b.most);
    m.last = b.changed ? b.last : a.last;
  }
  columns_.resize(merged);
  ++width_shift_;
}

HeapTimeline LiveBytesOverTime::timeline(int64_t end_ns) const {
  HeapTimeline t;
  if (columns_.empty()) return t;
  LiveBytesOverTime fitted = *this;
  const uint64_t end = std::max(offset(end_ns), last_offset_);
  while ((end >> fitted.width_shift_) >= kColumns) fitted.widen();
  t.start_ns = start_ns_;
  t.column_ns = int64_t{1} << fitted.width_shift_;  // at most 2^58: 64 columns span any offset
  // Each column over its whole time: the bytes live on entering it (after
  // the last change before it) or the most within it; past the last
  // change, what stayed live.
  const size_t count = static_cast<size_t>(end >> fitted.width_shift_) + 1;
  t.most_live_bytes.reserve(count);
  uint64_t entering = 0;
  for (size_t i = 0; i < count; ++i) {
    const Column c = i < fitted.columns_.size() ? fitted.columns_[i] : Column{};
    t.most_live_bytes.push_back(c.changed ? std::max(entering, c.most) : entering);
    if (c.changed) entering = c.last;
  }
  return t;
}

}  // namespace spoor::analysis
