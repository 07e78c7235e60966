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

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace spoor::kernelsrc {

class TimeOrder {
 public:
  // Keeps a copy of `record` (a whole perf record: at most 64 KiB, its
  // size a multiple of 8, so every copy stays 8-byte aligned) stamped
  // `time_ns`. Cost: the copy, and a step back per held record stamped
  // later than it (none for a ring in order; a few for the kernel's late
  // ones).
  void hold(std::span<const uint8_t> record, uint64_t time_ns) {
    if (chunks_.empty() || chunks_[tail_].used + record.size() > kChunkBytes) {
      // The chunk left behind is reused once nothing in it is held.
      if (!chunks_.empty() && chunks_[tail_].held == 0) {
        chunks_[tail_].used = 0;
        spare_.push_back(tail_);
      }
      tail_ = fresh_chunk();
    }
    Chunk& c = chunks_[tail_];
    std::memcpy(c.bytes.get() + c.used, record.data(), record.size());
    const Held h{time_ns, tail_, static_cast<uint32_t>(c.used), static_cast<uint32_t>(record.size())};
    c.used += record.size();
    ++c.held;
    held_.push_back(h);
    size_t at = held_.size() - 1;
    for (; at > first_ && held_[at - 1].time > time_ns; --at) held_[at] = held_[at - 1];
    held_[at] = h;
  }

  // Calls each(record) for every held record stamped at or before
  // `up_to_ns`, earliest first (records of one time in the order they were
  // held), then drops them. A chunk of copies none of which is held any
  // more is reused as it is: nothing is copied twice.
  template <class Each>
  void release(uint64_t up_to_ns, Each each) {
    for (; first_ < held_.size() && held_[first_].time <= up_to_ns; ++first_) {
      const Held& h = held_[first_];
      Chunk& c = chunks_[h.chunk];
      each(std::span<const uint8_t>(c.bytes.get() + h.offset, h.size));
      if (--c.held == 0 && h.chunk != tail_) {
        c.used = 0;
        spare_.push_back(h.chunk);
      }
    }
    if (first_ == held_.size()) {
      held_.clear();
      first_ = 0;
      if (!chunks_.empty()) chunks_[tail_].used = 0;  // empty too: its room is reused from the start
    } else if (first_ * 2 > held_.size()) {
      held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(first_));
      first_ = 0;
    }
  }

  size_t held() const { return held_.size() - first_; }
  // Chunks of kChunkBytes allocated: what is held, and the spares.
  size_t chunks() const { return chunks_.size(); }
  // 16 records of the largest size (perf_event_header.size is 16 bits).
  static constexpr size_t kChunkBytes = size_t{1} << 20;

 private:
  struct Chunk {
    std::unique_ptr<uint8_t[]> bytes;
    size_t used = 0;  // bytes written
    size_t held = 0;  // records in it not yet released
  };
  struct Held {
    uint64_t time;
    uint32_t chunk;
    uint32_t offset;
    uint32_t size;
  };

  uint32_t fresh_chunk() {
    if (!spare_.empty()) {
      const uint32_t id = spare_.back();
      spare_.pop_back();
      return id;
    }
    chunks_.push_back(Chunk{std::make_unique<uint8_t[]>(kChunkBytes)});
    return static_cast<uint32_t>(chunks_.size() - 1);
  }

  std::vector<Held> held_;  // in time order; released ones before first_
  size_t first_ = 0;
  std::vector<Chunk> chunks_;    // the copies
  std::vector<uint32_t> spare_;  // chunks holding nothing
  uint32_t tail_ = 0;            // the chunk hold() writes into
};

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_TIME_ORDER_H
