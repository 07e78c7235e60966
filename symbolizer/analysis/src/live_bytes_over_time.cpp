#include "live_bytes_over_time.h"

#include <algorithm>

namespace spoor::analysis {

LiveBytesOverTime::Column LiveBytesOverTime::Column::merged(const Column& a, const Column& b) {
  Column m;
  m.changed = a.changed || b.changed;
  m.most = a.changed && b.changed ? std::max(a.most, b.most) : (a.changed ? a.most : b.most);
  m.last = b.changed ? b.last : a.last;
  return m;
}

HeapTimeline LiveBytesOverTime::timeline(int64_t end_ns) const {
  HeapTimeline t;
  if (columns_.empty()) return t;
  const TimeColumns<Column> fitted = columns_.fitted_to(end_ns);
  t.start_ns = fitted.start_ns();
  t.column_ns = fitted.column_ns();
  // Each column over its whole time: the bytes live on entering it (after
  // the last change before it) or the most within it; past the last
  // change, what stayed live.
  t.most_live_bytes.reserve(fitted.columns().size());
  uint64_t entering = 0;
  for (const Column& c : fitted.columns()) {
    t.most_live_bytes.push_back(c.changed ? std::max(entering, c.most) : entering);
    if (c.changed) entering = c.last;
  }
  return t;
}

}  // namespace spoor::analysis
