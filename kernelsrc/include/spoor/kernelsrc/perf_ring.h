// Reading one perf_event_open ring buffer (the mapping of 1 + 2^n pages:
// the perf_event_mmap_page, then the data area). Works on any memory laid
// out that way, so tests feed it synthetic buffers.
#ifndef SPOOR_KERNELSRC_PERF_RING_H
#define SPOOR_KERNELSRC_PERF_RING_H

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace spoor::kernelsrc {

class PerfRing {
 public:
  // header: the first page of the mapping; data: data_size bytes (a power of two).
  PerfRing(perf_event_mmap_page* header, uint8_t* data, size_t data_size)
      : header_(header), data_(data), size_(data_size), scratch_(65536 / 8) {}

  // Calls on_record(span of the whole record, header first) for every
  // record the kernel has published, oldest first, then gives the space
  // back. A record whose body wraps past the end of the data area is
  // copied to scratch first, so on_record always sees it contiguous.
  // A header that cannot be right (size below 8, not a multiple of 8, or
  // past the published data) means the ring cannot be walked further:
  // everything published is skipped and counted in corrupt().
  // Returns the records visited.
  template <class OnRecord>
  size_t drain(OnRecord on_record) {
    // Acquire: the kernel writes a record, then publishes data_head with a
    // release (smp_store_release in perf_output_put_handle); loading it
    // with acquire makes every record below head visible here.
    const uint64_t head = __atomic_load_n(&header_->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = header_->data_tail;  // only this reader writes it
    size_t visited = 0;
    while (tail < head) {
      perf_event_header h;
      copy_out(tail, &h, sizeof h);
      if (h.size < sizeof h || (h.size & 7) != 0 || h.size > head - tail) {
        ++corrupt_;
        tail = head;
        break;
      }
      const size_t at = tail & (size_ - 1);
      const uint8_t* record = data_ + at;
      if (at + h.size > size_) {
        copy_out(tail, scratch_.data(), h.size);
        record = reinterpret_cast<const uint8_t*>(scratch_.data());
      }
      on_record(std::span<const uint8_t>(record, h.size));
      tail += h.size;
      ++visited;
    }
    // Release: our reads of the records happen before the kernel may
    // overwrite them, which it does only after it sees this tail.
    __atomic_store_n(&header_->data_tail, tail, __ATOMIC_RELEASE);
    return visited;
  }

  // Bytes published and not yet read.
  uint64_t pending() const {
    return __atomic_load_n(&header_->data_head, __ATOMIC_ACQUIRE) - header_->data_tail;
  }
  uint64_t corrupt() const { return corrupt_; }

 private:
  void copy_out(uint64_t position, void* out, size_t n) const {
    const size_t at = position & (size_ - 1);
    const size_t first = n < size_ - at ? n : size_ - at;
    std::memcpy(out, data_ + at, first);
    if (first < n) std::memcpy(static_cast<uint8_t*>(out) + first, data_, n - first);
  }

  perf_event_mmap_page* header_;
  uint8_t* data_;
  size_t size_;
  std::vector<uint64_t> scratch_;  // perf_event_header.size is 16 bits: 64 KiB at most
  uint64_t corrupt_ = 0;
};

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_PERF_RING_H
