// Columns of equal time over a span whose end is unknown until it comes
// (an image's life, a trace's I/O): at most kMost of them, whatever the
// span's length. A time past the last column doubles the columns' width
// (a power of two of nanoseconds), merging them in pairs, so each column
// stays exact: what it holds covers its whole time and nothing else.
// Finding a time's column is a subtraction, a shift and a compare; the
// merges come at most 58 times in all, of kMost columns each.
//
// Column: default-constructible (an empty column), with
//   static Column merged(const Column& earlier, const Column& later).
#ifndef SPOOR_ANALYSIS_TIME_COLUMNS_H
#define SPOOR_ANALYSIS_TIME_COLUMNS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spoor::analysis {

template <class Column>
class TimeColumns {
 public:
  static constexpr size_t kMost = 64;

  explicit TimeColumns(int64_t start_ns) : start_ns_(start_ns) {}

  // The column holding `time_ns` (a time before the start: the first),
  // made when new.
  Column& at(int64_t time_ns) {
    const uint64_t at = offset(time_ns);
    if ((at >> shift_) >= columns_.size()) grow_to(at);
    if (at > latest_) latest_ = at;
    return columns_[static_cast<size_t>(at >> shift_)];
  }

  // These columns widened until `end_ns` (or the latest time given, when
  // later) falls within kMost of them, and made up to it: the last column
  // holds the end.
  TimeColumns fitted_to(int64_t end_ns) const {
    TimeColumns f = *this;
    const uint64_t end = offset(end_ns) > latest_ ? offset(end_ns) : latest_;
    f.grow_to(end);
    return f;
  }

  bool empty() const { return columns_.empty(); }
  int64_t start_ns() const { return start_ns_; }
  int64_t column_ns() const { return int64_t{1} << shift_; }  // at most 2^58: kMost columns span any offset
  const std::vector<Column>& columns() const { return columns_; }

 private:
  // Nanoseconds from the start, unsigned: any two times' distance fits.
  uint64_t offset(int64_t time_ns) const {
    return time_ns > start_ns_ ? static_cast<uint64_t>(time_ns) - static_cast<uint64_t>(start_ns_) : 0;
  }

  // Widens until `at` falls within kMost columns, then makes those up to it.
  void grow_to(uint64_t at) {
    while ((at >> shift_) >= kMost) {
      const size_t merged = (columns_.size() + 1) / 2;
      for (size_t j = 0; j < merged; ++j)
        columns_[j] = Column::merged(columns_[2 * j], 2 * j + 1 < columns_.size() ? columns_[2 * j + 1] : Column{});
      columns_.resize(merged);
      ++shift_;
    }
    if ((at >> shift_) >= columns_.size()) columns_.resize(static_cast<size_t>(at >> shift_) + 1);
  }

  int64_t start_ns_;
  int shift_ = 0;         // the columns' width: 2^shift_ ns
  uint64_t latest_ = 0;   // the offset of the latest time given
  std::vector<Column> columns_;  // up to the latest time given
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_TIME_COLUMNS_H
