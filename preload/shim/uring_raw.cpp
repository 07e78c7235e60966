// Rings a program drives with its own system calls (uring_raw.h). The
// kernel's io_uring_params say where each part of the ring lies in the
// program's mappings of the descriptor (mmap at IORING_OFF_SQ_RING,
// IORING_OFF_CQ_RING and IORING_OFF_SQES); once all are mapped, each
// io_uring_enter is read like a liburing call:
//   - before it, the entries between the kernel's submission head (or
//     what was recorded already) and the tail the program published, as
//     many as the call submits (all of them under SQPOLL, whose thread
//     submits on its own): UringSubmit each, with the call's stack;
//   - after it, the completions that arrived (uring_rings.h).
// A ring's last completions are read before its completion queue is
// unmapped. Rings set up with IORING_SETUP_NO_MMAP (the program's own
// memory) and calls that name a registered ring (IORING_ENTER_REGISTERED_RING)
// are not read.
//
// Cost: nothing for a program that sets up no ring this way; otherwise one
// load and a branch in mmap and munmap, and a scan of 16 slots per
// io_uring_enter and per mapping of a ring's descriptor.
#include "uring_raw.h"

#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io_interpose.h"
#include "raw_system_call.h"
#include "reentry_guard.h"
#include "uring_rings.h"

// Newer than the kernel headers Debian 12 builds with.
#ifndef IORING_SETUP_NO_MMAP
#define IORING_SETUP_NO_MMAP (1U << 14)
#endif
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif

namespace spoor::preload {

std::atomic<bool> g_raw_rings_seen{false};

namespace {

constexpr int kFree = -1, kFilling = -2;

struct RawRing {
  std::atomic<int> fd{kFree};
  unsigned flags = 0;
  unsigned features = 0;
  struct io_sqring_offsets sq_off {};
  struct io_cqring_offsets cq_off {};
  unsigned sq_entries = 0;
  std::atomic<const unsigned char*> sq_ring{nullptr};
  std::atomic<const unsigned char*> cq_ring{nullptr};
  std::atomic<const unsigned char*> sqes{nullptr};
  std::atomic<unsigned> sq_recorded{0};  // the next submission index not recorded
  std::atomic<unsigned> cq_seen{0};      // the next completion index not looked at
  bool ever_mapped_cq = false;
  bool ever_mapped = false;  // a slot is freed when what was mapped is unmapped
};
constexpr int kRawRings = 16;
constinit RawRing g_raw[kRawRings];

RawRing* ring_of_fd(int fd) {
  for (RawRing& ring : g_raw)
    if (ring.fd.load(std::memory_order_acquire) == fd) return &ring;
  return nullptr;
}

const unsigned* word_at(const unsigned char* base, unsigned offset) {
  return reinterpret_cast<const unsigned*>(base + offset);
}

// A ring just set up: a slot (a stale one of the same descriptor first),
// filled from what the kernel wrote back into `params`.
void follow(int fd, const struct io_uring_params& params, uint64_t start) {
  if ((params.flags & IORING_SETUP_NO_MMAP) != 0) return;
  RawRing* slot = ring_of_fd(fd);
  if (slot != nullptr) {
    int expected = fd;
    if (!slot->fd.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) slot = nullptr;
  }
  for (int i = 0; slot == nullptr && i < kRawRings; ++i) {
    int expected = kFree;
    if (g_raw[i].fd.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) slot = &g_raw[i];
  }
  if (slot == nullptr) return;  // all taken: this ring is not read
  slot->flags = params.flags;
  slot->features = params.features;
  slot->sq_off = params.sq_off;
  slot->cq_off = params.cq_off;
  slot->sq_entries = params.sq_entries;
  slot->sq_ring.store(nullptr, std::memory_order_relaxed);
  slot->cq_ring.store(nullptr, std::memory_order_relaxed);
  slot->sqes.store(nullptr, std::memory_order_relaxed);
  slot->sq_recorded.store(0, std::memory_order_relaxed);
  slot->cq_seen.store(0, std::memory_order_relaxed);
  slot->ever_mapped_cq = false;
  slot->ever_mapped = false;
  slot->fd.store(fd, std::memory_order_release);
  g_raw_rings_seen.store(true, std::memory_order_release);
  if (kIoFdCreated.enabled()) write_fd_created(fd, kIoCreateIoUring, start);
}

SPOOR_NOINLINE void record_setup(long fd, const struct io_uring_params* params, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on() || fd < 0 || params == nullptr) return;
  follow(static_cast<int>(fd), *params, start);
}

// The ring's completion queue, when its parts are mapped.
bool completion_view(const RawRing& ring, CompletionRing& view) {
  const unsigned char* base = ring.cq_ring.load(std::memory_order_acquire);
  if (base == nullptr) return false;
  view = CompletionRing{word_at(base, ring.cq_off.head),
                        word_at(base, ring.cq_off.tail),
                        *word_at(base, ring.cq_off.ring_mask),
                        *word_at(base, ring.cq_off.ring_entries),
                        base + ring.cq_off.cqes,
                        completion_stride(ring.flags),
                        ring.fd.load(std::memory_order_relaxed)};
  return true;
}

// Before io_uring_enter: UringSubmit for the entries it will submit.
SPOOR_NOINLINE void record_submissions(RawRing& ring, unsigned to_submit, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on() || !kIoUringSubmit.enabled()) return;
  const unsigned char* sq = ring.sq_ring.load(std::memory_order_acquire);
  const unsigned char* sqes = ring.sqes.load(std::memory_order_acquire);
  if (sq == nullptr || sqes == nullptr) return;
  const unsigned mask = *word_at(sq, ring.sq_off.ring_mask);
  const unsigned head = load_acquire(word_at(sq, ring.sq_off.head));
  const unsigned tail = load_acquire(word_at(sq, ring.sq_off.tail));
  unsigned from = ring.sq_recorded.load(std::memory_order_relaxed);
  if (static_cast<int>(from - head) < 0) from = head;  // the kernel took entries past those recorded
  unsigned to = tail;
  const bool polled = (ring.flags & IORING_SETUP_SQPOLL) != 0;
  if (!polled && static_cast<int>(to - (head + to_submit)) > 0) to = head + to_submit;
  if (static_cast<int>(to - from) <= 0) return;
  if (to - from > ring.sq_entries) from = to - ring.sq_entries;
  ring.sq_recorded.store(to, std::memory_order_relaxed);
  const size_t stride = submission_stride(ring.flags);
  const auto* array = (ring.flags & IORING_SETUP_NO_SQARRAY) != 0 ? nullptr : word_at(sq, ring.sq_off.array);
  const int fd = ring.fd.load(std::memory_order_relaxed);
  const uint32_t stack = caller_stack();
  for (unsigned index = from; index != to; ++index) {
    const unsigned entry = array != nullptr ? array[index & mask] : index & mask;
    if (entry >= ring.sq_entries) continue;  // the kernel drops such an entry
    write_submission(fd, sqes + entry * stride, start, stack);
  }
}

// After a successful io_uring_register: a change of the ring's table of
// registered files (the kernel has read what the call names, so the shim
// can too).
SPOOR_NOINLINE void record_register(int ring_fd, unsigned opcode, const void* arg, unsigned count) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  if (opcode == IORING_UNREGISTER_FILES) {
    write_registered_files(ring_fd, kIoUringFilesUnregister, 0, nullptr, 0);
    return;
  }
  if (arg == nullptr) return;
  switch (opcode) {
    case IORING_REGISTER_FILES:
      write_registered_files(ring_fd, kIoUringFilesRegister, 0, static_cast<const int*>(arg), count);
      break;
    case IORING_REGISTER_FILES2: {
      const auto& table = *static_cast<const struct io_uring_rsrc_register*>(arg);
      write_registered_files(ring_fd, kIoUringFilesRegister, 0, reinterpret_cast<const int*>(table.data),
                             table.data != 0 ? table.nr : 0);
      break;
    }
    case IORING_REGISTER_FILES_UPDATE: {
      const auto& update = *static_cast<const struct io_uring_files_update*>(arg);
      write_registered_files(ring_fd, kIoUringFilesUpdate, update.offset, reinterpret_cast<const int*>(update.fds),
                             count);
      break;
    }
    case IORING_REGISTER_FILES_UPDATE2: {
      const auto& update = *static_cast<const struct io_uring_rsrc_update2*>(arg);
      write_registered_files(ring_fd, kIoUringFilesUpdate, update.offset, reinterpret_cast<const int*>(update.data),
                             update.nr);
      break;
    }
    default:
      break;
  }
}

// After io_uring_enter: the completions that arrived.
SPOOR_NOINLINE void record_completions(RawRing& ring) {
  KeptErrno kept;
  IoRecording recording;
  CompletionRing view;
  if (recording.on() && completion_view(ring, view)) write_completions(view, ring.cq_seen);
}

}  // namespace

}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" long spoor_ring_system_call(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  if (!recording_rings() || t_in_ring_call) return as_libc_result(raw_system_call(number, a1, a2, a3, a4, a5, a6));
  if (number == SYS_io_uring_setup) {
    const uint64_t start = spoor_port_ticks();
    const long result = as_libc_result(raw_system_call(number, a1, a2, a3, a4, a5, a6));
    record_setup(result, reinterpret_cast<const struct io_uring_params*>(a2), start);
    return result;
  }
  if (number == SYS_io_uring_register) {
    const long result = as_libc_result(raw_system_call(number, a1, a2, a3, a4, a5, a6));
    // A descriptor, not a registered ring's index (IORING_REGISTER_USE_REGISTERED_RING is the top bit).
    if (result >= 0 && static_cast<unsigned>(a2) < 0x80000000U)
      record_register(static_cast<int>(a1), static_cast<unsigned>(a2), reinterpret_cast<const void*>(a3),
                      static_cast<unsigned>(a4));
    return result;
  }
  if (number == SYS_io_uring_enter && (static_cast<unsigned>(a4) & IORING_ENTER_REGISTERED_RING) == 0) {
    RawRing* ring = ring_of_fd(static_cast<int>(a1));
    if (ring != nullptr) {
      const uint64_t start = spoor_port_ticks();
      record_submissions(*ring, static_cast<unsigned>(a2), start);
      const long result = as_libc_result(raw_system_call(number, a1, a2, a3, a4, a5, a6));
      record_completions(*ring);
      return result;
    }
  }
  return as_libc_result(raw_system_call(number, a1, a2, a3, a4, a5, a6));
}

namespace spoor::preload {

void note_ring_mapping(int fd, long long offset, const void* address, size_t size) {
  (void)size;
  RawRing* ring = ring_of_fd(fd);
  if (ring == nullptr) return;
  // The descriptor may have been closed and its number reused for a file.
  char link[64];
  const size_t length = fd_link(fd, link, sizeof link);
  static constexpr char kRingLink[] = "anon_inode:[io_uring]";
  if (length != sizeof kRingLink - 1 || memcmp(link, kRingLink, length) != 0) return;
  const auto* base = static_cast<const unsigned char*>(address);
  ring->ever_mapped = true;
  if (static_cast<unsigned long long>(offset) == IORING_OFF_SQ_RING) {
    ring->sq_ring.store(base, std::memory_order_release);
    // One mapping holds both queues: the completion queue is there unless
    // the program maps it apart as well.
    const bool single_mapping = (ring->features & IORING_FEAT_SINGLE_MMAP) != 0;
    if (single_mapping && ring->cq_ring.load(std::memory_order_relaxed) == nullptr) {
      ring->cq_seen.store(load_acquire(word_at(base, ring->cq_off.head)), std::memory_order_relaxed);
      ring->cq_ring.store(base, std::memory_order_release);
      ring->ever_mapped_cq = true;
    }
  } else if (static_cast<unsigned long long>(offset) == IORING_OFF_CQ_RING) {
    if (!ring->ever_mapped_cq)
      ring->cq_seen.store(load_acquire(word_at(base, ring->cq_off.head)), std::memory_order_relaxed);
    ring->cq_ring.store(base, std::memory_order_release);
    ring->ever_mapped_cq = true;
  } else if (static_cast<unsigned long long>(offset) == IORING_OFF_SQES) {
    ring->sqes.store(base, std::memory_order_release);
  }
}

void before_ring_unmap(const void* address, size_t size) {
  const auto* begin = static_cast<const unsigned char*>(address);
  const unsigned char* end = begin + size;
  const auto within = [&](const unsigned char* p) { return p != nullptr && p >= begin && p < end; };
  for (RawRing& ring : g_raw) {
    if (ring.fd.load(std::memory_order_acquire) < 0) continue;
    const unsigned char* cq = ring.cq_ring.load(std::memory_order_acquire);
    if (within(cq)) {
      record_completions(ring);
      ring.cq_ring.store(nullptr, std::memory_order_release);
    }
    if (within(ring.sq_ring.load(std::memory_order_acquire))) ring.sq_ring.store(nullptr, std::memory_order_release);
    if (within(ring.sqes.load(std::memory_order_acquire))) ring.sqes.store(nullptr, std::memory_order_release);
    if (ring.ever_mapped && ring.sq_ring.load() == nullptr && ring.cq_ring.load() == nullptr &&
        ring.sqes.load() == nullptr)
      ring.fd.store(kFree, std::memory_order_release);
  }
}

}  // namespace spoor::preload
