// The records of one CPU's perf ring, held back for a moment and given
// out in time order.
//
// A CPU's ring is in time order only nearly: the kernel reads a record's
// time before it reserves the record's room, and an interrupt in between
// (a sample, a wakeup), or the host pausing a virtual CPU there, writes
// its own later record first. Seen here: an MMAP2 record 38 us behind the
// record before it. perf sorts what it reads (its ordered_events) for the
// same reason. A stream whose times go back is read out of order by the
// trace's merge, so the recorder holds each ring's records until no
// earlier one can still come, and writes them sorted.
#ifndef SPOOR_KERNELSRC_TIME_ORDER_H
#define SPOOR_KERNELSRC_TIME_ORDER_H

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace spoor::kernelsrc {

class TimeOrder {
 public:
  // Keeps a copy of `record` (a whole perf record: its size is a multiple
  // of 8, so every copy stays 8-byte aligned) stamped `time_ns`.
  void hold(std::span<const uint8_t> record, uint64_t time_ns) {
    if (first_ < held_.size() && time_ns < held_.back().time) sorted_ = false;
    held_.push_back(Held{time_ns, next_sequence_++, bytes_.size(), static_cast<uint32_t>(record.size())});
    bytes_.insert(bytes_.end(), record.begin(), record.end());
  }

  // Calls each(record) for every held record stamped at or before
  // `up_to_ns`, earliest first (records of one time in the order they were
  // held), then drops them. Cost: a sort only when a record came out of
  // order since the last; the bytes of dropped records are reclaimed once
  // they are half of what is kept, so each byte is copied O(1) times.
  template <class Each>
  void release(uint64_t up_to_ns, Each each) {
    if (!sorted_) {
      std::sort(held_.begin() + static_cast<std::ptrdiff_t>(first_), held_.end(), [](const Held& a, const Held& b) {
        return a.time != b.time ? a.time < b.time : a.sequence < b.sequence;
      });
      sorted_ = true;
    }
    for (; first_ < held_.size() && held_[first_].time <= up_to_ns; ++first_) {
      each(std::span<const uint8_t>(bytes_.data() + held_[first_].offset, held_[first_].size));
      dropped_bytes_ += held_[first_].size;
    }
    if (first_ == held_.size()) {
      held_.clear();
      bytes_.clear();
      first_ = dropped_bytes_ = 0;
    } else if (dropped_bytes_ * 2 > bytes_.size()) {
      compact();
    }
  }

  size_t held() const { return held_.size() - first_; }

 private:
  struct Held {
    uint64_t time;
    uint64_t sequence;  // order of hold(), for records of one time
    size_t offset;      // into bytes_
    uint32_t size;
  };

  // What is still held, alone into fresh room.
  void compact() {
    std::vector<uint8_t> kept;
    kept.reserve(bytes_.size() - dropped_bytes_);
    for (size_t i = first_; i < held_.size(); ++i) {
      Held h = held_[i];
      kept.insert(kept.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(h.offset),
                  bytes_.begin() + static_cast<std::ptrdiff_t>(h.offset + h.size));
      h.offset = kept.size() - h.size;
      held_[i - first_] = h;
    }
    held_.resize(held_.size() - first_);
    bytes_.swap(kept);
    first_ = dropped_bytes_ = 0;
  }

  std::vector<Held> held_;      // released ones before first_
  std::vector<uint8_t> bytes_;  // the records' copies, in the order held
  size_t first_ = 0;
  size_t dropped_bytes_ = 0;    // of released records, still in bytes_
  bool sorted_ = true;          // held_[first_..] in time order
  uint64_t next_sequence_ = 0;
};

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_TIME_ORDER_H
