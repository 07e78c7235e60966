// Interposed liburing calls (UringSubmit, UringComplete, UringUnseen:
// io_provider.h): the io_uring requests a program hands to the kernel and
// the completions it gets back.
//
// liburing makes its system calls inline, and a program fills submission
// entries and reaps completions through inline functions, so none of it
// passes a libc call. What does pass through a call is liburing's own
// exported entry points: the submit family, the waits, the queue's set-up
// and tear-down. Around each, the shim reads the program's `struct
// io_uring` (its layout is liburing.so.2's ABI):
//   - the entries the call handed over: liburing moves sq.sqe_head up to
//     sq.sqe_tail as it flushes them, so the entries between the head
//     before and after the call are the ones it submitted;
//   - the completions that arrived since the last call seen on the ring:
//     the completion queue's entries from the last index looked at up to
//     the kernel's tail. One the program has not reaped yet is intact (the
//     kernel reuses a slot only after the program's head has passed it);
//     one it has reaped is read only while fewer than half a ring of
//     completions came after it, else counted unseen (UringUnseen).
// Completions that arrive after the last call seen on a ring (a program
// that exits without io_uring_queue_exit) are not in the trace: the reader
// counts their requests as uncollected.
//
// Only liburing's own functions are decoded: a hook whose next definition
// lies in another library (a program's own function of the same name)
// forwards and records nothing.
//
// Cost when the events are off: a load and a branch per call beyond the
// forward. When on: two loads before the call, and after it one event per
// entry handed over and per completion read, a scan of at most 64 ring
// slots, one stack per call; no lock, no allocation.
#include <dlfcn.h>
#include <liburing.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "io_interpose.h"
#include "reentry_guard.h"
#include "uring_raw.h"
#include "uring_rings.h"

namespace spoor::preload {
namespace {

// The next definition of a liburing function, and whether it is
// liburing's (the soname's file name starts "liburing.so."), found once.
template <class Fn>
class LiburingFunction {
 public:
  explicit constexpr LiburingFunction(const char* name) : next_(name) {}

  SPOOR_ALWAYS_INLINE Fn get() { return next_.get(); }

  // Whether `fn` (what get() returned) is liburing's. One load once known.
  SPOOR_ALWAYS_INLINE bool decodable(Fn fn) {
    const int known = liburing_.load(std::memory_order_relaxed);
    return SPOOR_LIKELY(known >= 0) ? known == 1 : check(fn);
  }

 private:
  SPOOR_NOINLINE bool check(Fn fn) {
    Dl_info info{};
    bool ours = false;
    if (fn != nullptr && dladdr(reinterpret_cast<void*>(fn), &info) != 0 && info.dli_fname != nullptr) {
      const char* slash = strrchr(info.dli_fname, '/');
      const char* base = slash != nullptr ? slash + 1 : info.dli_fname;
      ours = strncmp(base, "liburing.so.", 12) == 0;
    }
    liburing_.store(ours ? 1 : 0, std::memory_order_relaxed);
    return ours;
  }

  NextFunction<Fn> next_;
  std::atomic<int> liburing_{-1};
};

using InitFn = int (*)(unsigned, struct io_uring*, unsigned);
using InitParamsFn = int (*)(unsigned, struct io_uring*, struct io_uring_params*);
using MmapFn = int (*)(int, struct io_uring_params*, struct io_uring*);
using ExitFn = void (*)(struct io_uring*);
using SubmitFn = int (*)(struct io_uring*);
using SubmitWaitFn = int (*)(struct io_uring*, unsigned);
using SubmitWaitTimeoutFn = int (*)(struct io_uring*, struct io_uring_cqe**, unsigned, struct __kernel_timespec*,
                                    sigset_t*);
using GetCqeFn = int (*)(struct io_uring*, struct io_uring_cqe**, unsigned, unsigned, sigset_t*);
using WaitCqesFn = int (*)(struct io_uring*, struct io_uring_cqe**, unsigned, struct __kernel_timespec*, sigset_t*);
using WaitTimeoutFn = int (*)(struct io_uring*, struct io_uring_cqe**, struct __kernel_timespec*);
using PeekBatchFn = unsigned (*)(struct io_uring*, struct io_uring_cqe**, unsigned);

constinit LiburingFunction<InitFn> g_queue_init{"io_uring_queue_init"};
constinit LiburingFunction<InitParamsFn> g_queue_init_params{"io_uring_queue_init_params"};
constinit LiburingFunction<MmapFn> g_queue_mmap{"io_uring_queue_mmap"};
constinit LiburingFunction<ExitFn> g_queue_exit{"io_uring_queue_exit"};
constinit LiburingFunction<SubmitFn> g_submit{"io_uring_submit"};
constinit LiburingFunction<SubmitWaitFn> g_submit_and_wait{"io_uring_submit_and_wait"};
constinit LiburingFunction<SubmitWaitTimeoutFn> g_submit_and_wait_timeout{"io_uring_submit_and_wait_timeout"};
constinit LiburingFunction<SubmitFn> g_submit_and_get_events{"io_uring_submit_and_get_events"};
constinit LiburingFunction<SubmitFn> g_get_events{"io_uring_get_events"};
constinit LiburingFunction<GetCqeFn> g_get_cqe{"__io_uring_get_cqe"};
constinit LiburingFunction<WaitCqesFn> g_wait_cqes{"io_uring_wait_cqes"};
constinit LiburingFunction<WaitTimeoutFn> g_wait_cqe_timeout{"io_uring_wait_cqe_timeout"};
constinit LiburingFunction<PeekBatchFn> g_peek_batch_cqe{"io_uring_peek_batch_cqe"};

using RegisterFilesFn = int (*)(struct io_uring*, const int*, unsigned);
using RegisterFilesTagsFn = int (*)(struct io_uring*, const int*, const __u64*, unsigned);
using UpdateFilesFn = int (*)(struct io_uring*, unsigned, const int*, unsigned);
using UpdateFilesTagFn = int (*)(struct io_uring*, unsigned, const int*, const __u64*, unsigned);
using SparseFilesFn = int (*)(struct io_uring*, unsigned);
using UnregisterFilesFn = int (*)(struct io_uring*);

constinit LiburingFunction<RegisterFilesFn> g_register_files{"io_uring_register_files"};
constinit LiburingFunction<RegisterFilesTagsFn> g_register_files_tags{"io_uring_register_files_tags"};
constinit LiburingFunction<UpdateFilesFn> g_register_files_update{"io_uring_register_files_update"};
constinit LiburingFunction<UpdateFilesTagFn> g_register_files_update_tag{"io_uring_register_files_update_tag"};
constinit LiburingFunction<SparseFilesFn> g_register_files_sparse{"io_uring_register_files_sparse"};
constinit LiburingFunction<UnregisterFilesFn> g_unregister_files{"io_uring_unregister_files"};

// --- the rings seen, and how far their completions were read ------------

// One ring the shim follows. `cqes` tells a ring apart from a later one
// made at the same address (a ring on the stack, left without
// io_uring_queue_exit).
struct RingSlot {
  std::atomic<const struct io_uring*> ring{nullptr};
  std::atomic<const void*> cqes{nullptr};
  std::atomic<unsigned> seen{0};  // the next completion index not looked at
};
constexpr int kRingSlots = 64;
constinit RingSlot g_rings[kRingSlots];

// The ring's slot, taken if it has none; null when all are taken (its
// completions are then not read: its requests count as uncollected).
RingSlot* slot_of(const struct io_uring* ring) {
  RingSlot* free_slot = nullptr;
  for (RingSlot& slot : g_rings) {
    const struct io_uring* held = slot.ring.load(std::memory_order_acquire);
    if (held == ring) {
      if (slot.cqes.load(std::memory_order_acquire) != ring->cq.cqes) {
        // Another ring at the same address: its completions start at its head.
        slot.seen.store(load_acquire(ring->cq.khead), std::memory_order_relaxed);
        slot.cqes.store(ring->cq.cqes, std::memory_order_release);
      }
      return &slot;
    }
    if (held == nullptr && free_slot == nullptr) free_slot = &slot;
  }
  if (free_slot == nullptr) return nullptr;
  const struct io_uring* expected = nullptr;
  if (!free_slot->ring.compare_exchange_strong(expected, ring, std::memory_order_acq_rel)) return nullptr;
  free_slot->seen.store(load_acquire(ring->cq.khead), std::memory_order_relaxed);
  free_slot->cqes.store(ring->cq.cqes, std::memory_order_release);
  return free_slot;
}

void forget(const struct io_uring* ring) {
  for (RingSlot& slot : g_rings) {
    if (slot.ring.load(std::memory_order_relaxed) != ring) continue;
    slot.cqes.store(nullptr, std::memory_order_relaxed);
    slot.ring.store(nullptr, std::memory_order_release);
  }
}

}  // namespace

// Set while this thread is inside a liburing call the shim follows.
// liburing calls some of its exported functions itself (the waits call
// __io_uring_get_cqe, io_uring_get_probe sets up a ring), and a liburing
// built to use libc may make its system calls through syscall(): those
// inner calls are the outer one's, which records what they did.
constinit thread_local bool t_in_ring_call __attribute__((tls_model("initial-exec"))) = false;

namespace {

// --- reading the rings ---------------------------------------------------

// UringSubmit for the entries with indexes [from, to): those the call
// handed over.
void write_submissions(const struct io_uring* ring, unsigned from, unsigned to, uint64_t start, uint32_t stack) {
  const unsigned mask = *ring->sq.kring_mask;
  const unsigned entries = *ring->sq.kring_entries;
  if (to - from > entries) from = to - entries;  // not a flush liburing makes; read what the ring holds
  const size_t stride = submission_stride(ring->flags);
  const auto* base = reinterpret_cast<const unsigned char*>(ring->sq.sqes);
  for (unsigned index = from; index != to; ++index)
    write_submission(ring->ring_fd, base + (index & mask) * stride, start, stack);
}

// The completions that arrived since the last look.
void write_completions(const struct io_uring* ring) {
  RingSlot* slot = slot_of(ring);
  if (slot == nullptr) return;
  const CompletionRing view{ring->cq.khead,
                            ring->cq.ktail,
                            *ring->cq.kring_mask,
                            *ring->cq.kring_entries,
                            reinterpret_cast<const unsigned char*>(ring->cq.cqes),
                            completion_stride(ring->flags),
                            ring->ring_fd};
  write_completions(view, slot->seen);
}

// What a call's record needs from before it.
struct Before {
  unsigned head;
  uint64_t start;
};

SPOOR_ALWAYS_INLINE Before before_call(const struct io_uring* ring) {
  return Before{ring->sq.sqe_head, spoor_port_ticks()};
}

// After a call on `ring`: the entries it handed over, then the completions
// it found.
SPOOR_NOINLINE void record_call(const struct io_uring* ring, Before before) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const unsigned head = ring->sq.sqe_head;
  if (head != before.head && kIoUringSubmit.enabled())
    write_submissions(ring, before.head, head, before.start, caller_stack());
  write_completions(ring);
}

// A ring just set up: its descriptor, and its slot from its first index.
SPOOR_NOINLINE void record_setup(const struct io_uring* ring, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  if (kIoFdCreated.enabled()) write_fd_created(ring->ring_fd, kIoCreateIoUring, start);
  slot_of(ring);
}

SPOOR_NOINLINE void record_files(int ring_fd, uint8_t call, unsigned first, const int* fds, unsigned count) {
  KeptErrno kept;
  IoRecording recording;
  if (recording.on()) write_registered_files(ring_fd, call, first, fds, count);
}

// Before io_uring_queue_exit: the last completions, then the slot freed.
SPOOR_NOINLINE void record_exit(const struct io_uring* ring) {
  KeptErrno kept;
  IoRecording recording;
  if (recording.on()) write_completions(ring);
  forget(ring);
}

// The hooks' shared body (inlined into each, so that it stays the frame
// right below record_call, the stack skip counts on it).
// Whether a call on `ring` through `next` is one to record.
template <class Fn>
SPOOR_ALWAYS_INLINE bool followed(LiburingFunction<Fn>& function, Fn next, const struct io_uring* ring) {
  return recording_rings() && ring != nullptr && !t_in_ring_call && function.decodable(next);
}

template <class Fn, class... Args>
SPOOR_ALWAYS_INLINE auto forward(LiburingFunction<Fn>& function, struct io_uring* ring, Args... args) {
  const Fn next = function.get();
  using Result = decltype(next(ring, args...));
  if (SPOOR_UNLIKELY(next == nullptr)) {
    // liburing's errors are -errno; a count has none to give.
    if constexpr (std::is_signed_v<Result>) return static_cast<Result>(-ENOSYS);
    else return Result{0};
  }
  if (SPOOR_LIKELY(!followed(function, next, ring))) return next(ring, args...);
  const Before before = before_call(ring);
  Result result;
  {
    FlagScope inside(t_in_ring_call);
    result = next(ring, args...);
  }
  record_call(ring, before);
  return result;
}

template <class Fn, class... Args>
SPOOR_ALWAYS_INLINE int forward_setup(LiburingFunction<Fn>& function, struct io_uring* ring, Args... args) {
  const Fn next = function.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!followed(function, next, ring))) return next(args...);
  const uint64_t start = spoor_port_ticks();
  int result;
  {
    FlagScope inside(t_in_ring_call);
    result = next(args...);
  }
  if (result == 0) record_setup(ring, start);
  return result;
}

// The registered-files calls: the call, then (when it succeeded) the
// table's change. No stack: the requests that use the files carry theirs.
template <class Fn, class... Args>
SPOOR_ALWAYS_INLINE int forward_files(LiburingFunction<Fn>& function, struct io_uring* ring, uint8_t call,
                                      unsigned first, const int* fds, unsigned count, Args... args) {
  const Fn next = function.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!followed(function, next, ring))) return next(ring, args...);
  int result;
  {
    FlagScope inside(t_in_ring_call);
    result = next(ring, args...);
  }
  if (result >= 0) record_files(ring->ring_fd, call, first, fds, count);
  return result;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

SPOOR_INTERPOSE int io_uring_queue_init(unsigned entries, struct io_uring* ring, unsigned flags) {
  return forward_setup(g_queue_init, ring, entries, ring, flags);
}

SPOOR_INTERPOSE int io_uring_queue_init_params(unsigned entries, struct io_uring* ring,
                                               struct io_uring_params* params) {
  return forward_setup(g_queue_init_params, ring, entries, ring, params);
}

SPOOR_INTERPOSE int io_uring_queue_mmap(int fd, struct io_uring_params* params, struct io_uring* ring) {
  const MmapFn next = g_queue_mmap.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!followed(g_queue_mmap, next, ring))) return next(fd, params, ring);
  const int result = next(fd, params, ring);
  // A ring made from a descriptor the program had: followed from here.
  if (result == 0) slot_of(ring);
  return result;
}

SPOOR_INTERPOSE void io_uring_queue_exit(struct io_uring* ring) {
  const ExitFn next = g_queue_exit.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return;
  if (SPOOR_LIKELY(!followed(g_queue_exit, next, ring))) return next(ring);
  record_exit(ring);
  FlagScope inside(t_in_ring_call);
  next(ring);
}

SPOOR_INTERPOSE int io_uring_submit(struct io_uring* ring) { return forward(g_submit, ring); }

SPOOR_INTERPOSE int io_uring_submit_and_wait(struct io_uring* ring, unsigned wait_nr) {
  return forward(g_submit_and_wait, ring, wait_nr);
}

SPOOR_INTERPOSE int io_uring_submit_and_wait_timeout(struct io_uring* ring, struct io_uring_cqe** cqe_ptr,
                                                     unsigned wait_nr, struct __kernel_timespec* ts,
                                                     sigset_t* sigmask) {
  return forward(g_submit_and_wait_timeout, ring, cqe_ptr, wait_nr, ts, sigmask);
}

SPOOR_INTERPOSE int io_uring_submit_and_get_events(struct io_uring* ring) {
  return forward(g_submit_and_get_events, ring);
}

SPOOR_INTERPOSE int io_uring_get_events(struct io_uring* ring) { return forward(g_get_events, ring); }

SPOOR_INTERPOSE int __io_uring_get_cqe(struct io_uring* ring, struct io_uring_cqe** cqe_ptr, unsigned submit,
                                       unsigned wait_nr, sigset_t* sigmask) {
  return forward(g_get_cqe, ring, cqe_ptr, submit, wait_nr, sigmask);
}

SPOOR_INTERPOSE int io_uring_wait_cqes(struct io_uring* ring, struct io_uring_cqe** cqe_ptr, unsigned wait_nr,
                                       struct __kernel_timespec* ts, sigset_t* sigmask) {
  return forward(g_wait_cqes, ring, cqe_ptr, wait_nr, ts, sigmask);
}

SPOOR_INTERPOSE int io_uring_wait_cqe_timeout(struct io_uring* ring, struct io_uring_cqe** cqe_ptr,
                                              struct __kernel_timespec* ts) {
  return forward(g_wait_cqe_timeout, ring, cqe_ptr, ts);
}

SPOOR_INTERPOSE unsigned io_uring_peek_batch_cqe(struct io_uring* ring, struct io_uring_cqe** cqes,
                                                 unsigned count) {
  return forward(g_peek_batch_cqe, ring, cqes, count);
}

SPOOR_INTERPOSE int io_uring_register_files(struct io_uring* ring, const int* files, unsigned count) {
  return forward_files(g_register_files, ring, kIoUringFilesRegister, 0, files, count, files, count);
}

SPOOR_INTERPOSE int io_uring_register_files_tags(struct io_uring* ring, const int* files, const __u64* tags,
                                                 unsigned count) {
  return forward_files(g_register_files_tags, ring, kIoUringFilesRegister, 0, files, count, files, tags, count);
}

SPOOR_INTERPOSE int io_uring_register_files_sparse(struct io_uring* ring, unsigned count) {
  return forward_files(g_register_files_sparse, ring, kIoUringFilesRegister, 0, nullptr, 0, count);
}

SPOOR_INTERPOSE int io_uring_register_files_update(struct io_uring* ring, unsigned first, const int* files,
                                                   unsigned count) {
  return forward_files(g_register_files_update, ring, kIoUringFilesUpdate, first, files, count, first, files, count);
}

SPOOR_INTERPOSE int io_uring_register_files_update_tag(struct io_uring* ring, unsigned first, const int* files,
                                                       const __u64* tags, unsigned count) {
  return forward_files(g_register_files_update_tag, ring, kIoUringFilesUpdate, first, files, count, first, files,
                       tags, count);
}

SPOOR_INTERPOSE int io_uring_unregister_files(struct io_uring* ring) {
  return forward_files(g_unregister_files, ring, kIoUringFilesUnregister, 0, nullptr, 0);
}

}  // extern "C"
