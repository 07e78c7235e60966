// What the io_uring hooks share (uring_hooks.cpp, for rings driven through
// liburing; uring_raw.cpp, for rings a program drives with its own system
// calls): the events of the requests a call handed over and of the
// completions a ring holds. The caller holds the reentry guard.
#ifndef SPOOR_PRELOAD_URING_RINGS_H
#define SPOOR_PRELOAD_URING_RINGS_H

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace spoor::preload {

// Whether UringSubmit or UringComplete is on: two loads.
bool recording_rings();

// The bytes from one submission or completion queue entry to the next for
// a ring set up with `setup_flags` (IORING_SETUP_SQE128 doubles the one,
// IORING_SETUP_CQE32 the other).
size_t submission_stride(unsigned setup_flags);
size_t completion_stride(unsigned setup_flags);

// A word of a ring the kernel shares, read after what it published before.
inline unsigned load_acquire(const unsigned* word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }

// One UringSubmit for the submission queue entry at `entry` (a struct
// io_uring_sqe, the kernel's layout) of the ring whose descriptor is
// `ring_fd`.
void write_submission(int ring_fd, const void* entry, uint64_t start, uint32_t stack);

// UringFiles for `count` descriptors registered with the ring from index
// `first` (`call`: kIoUringFiles*), in events of at most 256; `fds` may be
// null for a table of empty slots (none are written then).
void write_registered_files(int ring_fd, uint8_t call, unsigned first, const int* fds, unsigned count);

// A completion queue as the kernel shares it: its head (the program's),
// its tail (the kernel's), and its entries.
struct CompletionRing {
  const unsigned* head;
  const unsigned* tail;
  unsigned mask;
  unsigned entries;
  const unsigned char* cqes;
  size_t stride;  // 16, or 32 under IORING_SETUP_CQE32
  int ring_fd;
};

// UringComplete for each completion from index `seen` up to the kernel's
// tail, and moves `seen` there (threads that look at once each take a
// different part). A completion the program has not reaped is intact (the
// kernel reuses a slot only after the program's head has passed it); one
// it has reaped is read only while fewer than half a ring of completions
// came after it (the kernel fills slots ahead of the tail it publishes),
// else counted in a UringUnseen.
void write_completions(const CompletionRing& ring, std::atomic<unsigned>& seen);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_URING_RINGS_H
