#include "uring_rings.h"

#include <linux/io_uring.h>

#include "io_provider.h"

namespace spoor::preload {
namespace {

// The bytes a request asks to move, where its len says so (a vectored
// request's len counts iovecs, which the shim does not follow).
uint64_t requested_bytes(const struct io_uring_sqe& entry) {
  switch (entry.opcode) {
    case IORING_OP_READ:
    case IORING_OP_WRITE:
    case IORING_OP_READ_FIXED:
    case IORING_OP_WRITE_FIXED:
    case IORING_OP_SEND:
    case IORING_OP_RECV:
      return entry.len;
    default:
      return 0;
  }
}

}  // namespace

size_t submission_stride(unsigned setup_flags) {
  return (setup_flags & IORING_SETUP_SQE128) != 0 ? 2 * sizeof(struct io_uring_sqe) : sizeof(struct io_uring_sqe);
}

size_t completion_stride(unsigned setup_flags) {
  return (setup_flags & IORING_SETUP_CQE32) != 0 ? 2 * sizeof(struct io_uring_cqe) : sizeof(struct io_uring_cqe);
}

bool recording_rings() { return kIoUringSubmit.enabled() || kIoUringComplete.enabled(); }

void write_submission(int ring_fd, const void* at, uint64_t start, uint32_t stack) {
  if (!kIoUringSubmit.enabled()) return;
  const auto& entry = *static_cast<const struct io_uring_sqe*>(at);
  kIoUringSubmit.write(ring_fd, entry.fd, static_cast<int64_t>(entry.off), requested_bytes(entry),
                       static_cast<uint64_t>(entry.user_data), start, stack, entry.opcode, entry.flags);
}

void write_registered_files(int ring_fd, uint8_t call, unsigned first, const int* fds, unsigned count) {
  if (!kIoUringFiles.enabled()) return;
  if (fds == nullptr) count = 0;
  constexpr unsigned kPerEvent = 256;
  unsigned done = 0;
  do {
    const unsigned n = count - done < kPerEvent ? count - done : kPerEvent;
    kIoUringFiles.write(ring_fd, done == 0 ? call : kIoUringFilesUpdate, first + done,
                        Blob{fds != nullptr ? fds + done : nullptr, static_cast<uint32_t>(n * sizeof(int))});
    done += n;
  } while (done < count);
}

void write_completions(const CompletionRing& ring, std::atomic<unsigned>& seen) {
  if (!kIoUringComplete.enabled()) return;
  const unsigned tail = load_acquire(ring.tail);
  unsigned from = seen.load(std::memory_order_relaxed);
  do {
    if (static_cast<int>(tail - from) <= 0) return;  // nothing new (or another thread read further)
  } while (!seen.compare_exchange_weak(from, tail, std::memory_order_relaxed));
  uint64_t unseen = 0;
  if (tail - from > ring.entries) {
    unseen = tail - from - ring.entries;
    from = tail - ring.entries;
  }
  for (unsigned index = from; index != tail; ++index) {
    const auto& slot = *reinterpret_cast<const struct io_uring_cqe*>(ring.cqes + (index & ring.mask) * ring.stride);
    const uint64_t user_data = slot.user_data;
    const int32_t result = slot.res;
    const uint32_t flags = slot.flags;
    std::atomic_thread_fence(std::memory_order_acquire);
    const unsigned head = load_acquire(ring.head);
    const unsigned newest = load_acquire(ring.tail);
    const bool intact = static_cast<int>(head - index) <= 0 || newest - index < ring.entries / 2;
    if (!intact) {
      ++unseen;
      continue;
    }
    kIoUringComplete.write(ring.ring_fd, flags, user_data, int64_t{result});
  }
  if (unseen != 0) kIoUringUnseen.write(unseen, ring.ring_fd);
}

}  // namespace spoor::preload
