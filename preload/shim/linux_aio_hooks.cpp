// Linux's own asynchronous I/O (io_submit, io_getevents, io_pgetevents,
// io_cancel, io_destroy): the requests a program hands to the kernel and
// the results it collects, as AioSubmit and AioReturn events
// (io_provider.h), paired by the request's control block like POSIX
// AIO's. Two ways in: libaio's exported functions, interposed here (they
// make their system calls through syscall(), recorded once, by the
// function); and the system calls a program makes through syscall()
// itself, which syscall_hook.cpp hands here. Results a program reaps from
// the kernel's ring in user space are read from the ring (below).
//
// The control blocks of a submit are read after the call: the kernel
// copied each one it accepted. A result from io_getevents names the block
// it came from, which the program keeps until it has the result, so it is
// there when the call returns. Vectored requests carry no length (their
// iovecs are not followed): their results carry the bytes.
//
// Cost when the events are off: three loads, one branch per call. When on:
// an event per request handed over and per result collected, one stack per
// io_submit, a scan of 16 context slots per call; no lock, no allocation.
#include <linux/aio_abi.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#include <atomic>
#include <cerrno>

#include "io_interpose.h"
#include "raw_system_call.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

// libaio's io_context_t is the kernel's aio_context_t in a pointer.
using SubmitFn = int (*)(aio_context_t, long, struct iocb**);
using GetEventsFn = int (*)(aio_context_t, long, long, struct io_event*, struct timespec*);
using PGetEventsFn = int (*)(aio_context_t, long, long, struct io_event*, struct timespec*, const sigset_t*);
using CancelFn = int (*)(aio_context_t, struct iocb*, struct io_event*);
using DestroyFn = int (*)(aio_context_t);

constinit NextFunction<SubmitFn> g_io_submit{"io_submit"};
constinit NextFunction<GetEventsFn> g_io_getevents{"io_getevents"};
constinit NextFunction<PGetEventsFn> g_io_pgetevents{"io_pgetevents"};
constinit NextFunction<CancelFn> g_io_cancel{"io_cancel"};
constinit NextFunction<DestroyFn> g_io_destroy{"io_destroy"};

// Set while this thread is inside one of libaio's functions: libaio makes
// its system calls through syscall() (since 0.3.111), whose stand-in must
// not record them a second time.
constinit thread_local bool t_in_libaio __attribute__((tls_model("initial-exec"))) = false;

// The kIoAio* call of a request, or -1 for one that moves no file's bytes
// (poll, no-op).
int call_of(const struct iocb& block) {
  switch (block.aio_lio_opcode) {
    case IOCB_CMD_PREAD:
    case IOCB_CMD_PREADV:
      return kIoAioRead;
    case IOCB_CMD_PWRITE:
    case IOCB_CMD_PWRITEV:
      return kIoAioWrite;
    case IOCB_CMD_FSYNC:
      return kIoAioSync;
    case IOCB_CMD_FDSYNC:
      return kIoAioDataSync;
    default:
      return -1;
  }
}

// --- results a program reaps from the kernel's ring itself ---------------
//
// The context a program gets from io_setup is the address of the kernel's
// ring of results, which libaio's io_getevents and programs such as qemu
// read without a system call. The shim looks at the ring before and after
// each io_submit and before io_destroy. Once the ring's head has moved
// between two looks with no io_getevents on the context (the program reaps
// itself), and at io_destroy of a context never reaped through
// io_getevents, it writes the results that arrived since its first look.
// Results that arrive after a program's last io_submit, in a process that
// ends without io_destroy, are not seen: the reader counts their requests
// as uncollected.
// A context reaped through io_getevents is not read: its results are the
// events that call returns. The results stay readable until then: the
// kernel refills a slot only after the head passed it, and between two
// looks at most the requests then in flight complete, fewer than the
// ring's slots.

// The kernel's layout (fs/aio.c; the one libaio reads too).
struct AioRing {
  unsigned id;
  unsigned nr;    // slots; head and tail run from 0 to nr - 1
  unsigned head;  // the next result to reap
  unsigned tail;  // the next slot the kernel fills
  unsigned magic;
  unsigned compat_features;
  unsigned incompat_features;
  unsigned header_length;
  struct io_event events[];
};
constexpr unsigned kAioRingMagic = 0xa10a10a1;

struct AioContextSlot {
  std::atomic<aio_context_t> context{0};
  std::atomic<unsigned> seen{0};            // the next slot not written out
  std::atomic<unsigned> head{0};            // the ring's head at the last look
  std::atomic<bool> reaped_by_call{false};  // io_getevents used: its results are the events
  std::atomic<bool> reaps_itself{false};    // the head moved with no io_getevents
};
constexpr int kAioContexts = 16;
constinit AioContextSlot g_contexts[kAioContexts];

const AioRing* ring_of(aio_context_t context) {
  const auto* ring = reinterpret_cast<const AioRing*>(context);
  if (ring == nullptr || ring->magic != kAioRingMagic || ring->header_length != sizeof(AioRing) || ring->nr == 0)
    return nullptr;
  return ring;
}

// The context's slot, or null: only a context an io_submit accepted has
// one, so only a ring known to be mapped is read.
AioContextSlot* find_slot(aio_context_t context) {
  for (AioContextSlot& slot : g_contexts)
    if (slot.context.load(std::memory_order_acquire) == context) return &slot;
  return nullptr;
}

// After an io_submit the kernel accepted: the context's slot, taken (its
// results from the ring's head on) if it has none; null when all are
// taken.
AioContextSlot* follow_context(aio_context_t context) {
  if (AioContextSlot* slot = find_slot(context)) return slot;
  const AioRing* ring = ring_of(context);
  if (ring == nullptr) return nullptr;
  AioContextSlot* free_slot = nullptr;
  for (AioContextSlot& slot : g_contexts)
    if (slot.context.load(std::memory_order_acquire) == 0) {
      free_slot = &slot;
      break;
    }
  if (free_slot == nullptr) return nullptr;
  aio_context_t expected = 0;
  if (!free_slot->context.compare_exchange_strong(expected, context, std::memory_order_acq_rel)) return nullptr;
  free_slot->reaped_by_call.store(false, std::memory_order_relaxed);
  free_slot->reaps_itself.store(false, std::memory_order_relaxed);
  // From the head: the results not reaped yet (the first io_submit's
  // requests may have completed inside the call).
  const unsigned head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
  free_slot->head.store(head, std::memory_order_relaxed);
  free_slot->seen.store(head, std::memory_order_release);
  return free_slot;
}

void note_reaped_by_call(aio_context_t context) {
  if (AioContextSlot* slot = find_slot(context)) slot->reaped_by_call.store(true);
}

void forget_context(aio_context_t context) {
  for (AioContextSlot& slot : g_contexts) {
    aio_context_t expected = context;
    slot.context.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
  }
}

// A look at a followed context's ring, before and after io_submit, and
// before io_destroy (`last`): AioReturn for each result it received since
// the results last written, once the program is seen to reap it itself.
// Before io_submit, the results written precede the call's own requests
// (a control block whose result the program reaped may be handed over
// again in the same call); after it, they follow them (the kernel may
// have completed some inside the call). The block is not read (the
// program may have freed it once it had the result): the reader knows its
// request from its AioSubmit.
void write_ring_results(aio_context_t context, uint64_t start, bool last) {
  AioContextSlot* slot = find_slot(context);
  if (slot == nullptr || slot->reaped_by_call.load(std::memory_order_relaxed)) return;
  const AioRing* ring = ring_of(context);
  if (ring == nullptr) return;
  const unsigned head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
  if (slot->head.exchange(head, std::memory_order_relaxed) != head)
    slot->reaps_itself.store(true, std::memory_order_relaxed);
  if (!slot->reaps_itself.load(std::memory_order_relaxed) && !last) return;
  const unsigned nr = ring->nr;
  const unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
  unsigned from = slot->seen.load(std::memory_order_relaxed);
  do {
    if (from == tail || tail >= nr || from >= nr) return;
  } while (!slot->seen.compare_exchange_weak(from, tail, std::memory_order_relaxed));
  for (unsigned index = from; index != tail; index = index + 1 == nr ? 0 : index + 1) {
    const struct io_event& result = ring->events[index];
    if (result.obj == 0) continue;
    kIoAioReturn.write(Ptr(reinterpret_cast<const void*>(result.obj)), static_cast<int64_t>(result.res), start,
                       int32_t{-1});
  }
}

SPOOR_NOINLINE void record_ring_results(aio_context_t context, uint64_t start, bool last) {
  KeptErrno kept;
  IoRecording recording;
  if (recording.on() && kIoAioReturn.enabled()) write_ring_results(context, start, last);
}

// An AioSubmit for each request the kernel took (`result` of them), or
// for the first when it took none (`result`, -errno).
void write_submissions(long count, struct iocb* const* blocks, long result, uint64_t start, uint32_t stack) {
  if (blocks == nullptr || count <= 0 || !kIoAioSubmit.enabled()) return;
  const long taken = result >= 0 ? result : 1;
  const int32_t refused = result >= 0 ? 0 : static_cast<int32_t>(result);
  for (long i = 0; i < taken && i < count; ++i) {
    const struct iocb* block = blocks[i];
    if (block == nullptr) continue;
    const int call = call_of(*block);
    if (call < 0) continue;
    const bool plain = block->aio_lio_opcode == IOCB_CMD_PREAD || block->aio_lio_opcode == IOCB_CMD_PWRITE;
    const bool transfer = call == kIoAioRead || call == kIoAioWrite;
    kIoAioSubmit.write(static_cast<int32_t>(block->aio_fildes), refused,
                       transfer ? static_cast<int64_t>(block->aio_offset) : int64_t{0},
                       plain ? static_cast<uint64_t>(block->aio_nbytes) : uint64_t{0}, Ptr(block), start, stack,
                       static_cast<uint8_t>(call));
  }
}

// After io_submit: its requests (none read when the kernel could not read
// them), and the context followed from now on if the kernel accepted it.
SPOOR_NOINLINE void record_submit(aio_context_t context, long count, struct iocb* const* blocks, long result,
                                  uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  if (result >= 0 && kIoAioReturn.enabled()) follow_context(context);
  if (result == -EFAULT) return;  // the blocks may not be readable
  const uint32_t stack = kIoAioSubmit.enabled() && count > 0 ? caller_stack() : 0;
  write_submissions(count, blocks, result, start, stack);
  if (result >= 0 && kIoAioReturn.enabled()) write_ring_results(context, start, false);
}

// After io_getevents, io_pgetevents or io_cancel: an AioReturn for each of
// the `count` results.
SPOOR_NOINLINE void record_results(aio_context_t context, const struct io_event* events, long count,
                                   uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  if (context != 0) note_reaped_by_call(context);
  if (events == nullptr) return;
  for (long i = 0; i < count; ++i) {
    const auto* block = reinterpret_cast<const struct iocb*>(events[i].obj);
    if (block == nullptr || call_of(*block) < 0) continue;
    kIoAioReturn.write(Ptr(block), static_cast<int64_t>(events[i].res), start,
                       static_cast<int32_t>(block->aio_fildes));
  }
}

// libaio's function `call` makes, its system calls through syscall() left
// to it.
template <class Call>
int inside_libaio(Call call) {
  FlagScope inside(t_in_libaio);
  return call();
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

// io_submit, io_getevents, io_pgetevents or io_destroy through syscall()
// (the events array is the fourth argument of both getevents).
extern "C" long spoor_linux_aio_system_call(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  if (SPOOR_LIKELY(!kIoAioSubmit.enabled() && !kIoAioReturn.enabled()) || t_in_libaio)
    return as_libc_result(raw_system_call(number, a1, a2, a3, a4, a5, a6));
  const uint64_t start = spoor_port_ticks();
  const auto context = static_cast<aio_context_t>(a1);
  if (number == SYS_io_destroy) {
    record_ring_results(context, start, true);
    const long result = raw_system_call(number, a1, a2, a3, a4, a5, a6);
    if (result == 0) forget_context(context);
    return as_libc_result(result);
  }
  if (number == SYS_io_submit) record_ring_results(context, start, false);
  const long result = raw_system_call(number, a1, a2, a3, a4, a5, a6);
  if (number == SYS_io_submit)
    record_submit(context, a2, reinterpret_cast<struct iocb* const*>(a3), result, start);
  else
    record_results(context, reinterpret_cast<const struct io_event*>(a4), result > 0 ? result : 0, start);
  return as_libc_result(result);
}

extern "C" {

SPOOR_INTERPOSE int io_submit(aio_context_t context, long count, struct iocb** blocks) {
  const SubmitFn next = g_io_submit.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!kIoAioSubmit.enabled())) return next(context, count, blocks);
  const uint64_t start = spoor_port_ticks();
  record_ring_results(context, start, false);
  const int result = inside_libaio([&] { return next(context, count, blocks); });
  record_submit(context, count, blocks, result, start);  // libaio returns -errno
  return result;
}

SPOOR_INTERPOSE int io_getevents(aio_context_t context, long least, long most, struct io_event* events,
                                 struct timespec* timeout) {
  const GetEventsFn next = g_io_getevents.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!kIoAioReturn.enabled())) return next(context, least, most, events, timeout);
  const uint64_t start = spoor_port_ticks();
  const int result = inside_libaio([&] { return next(context, least, most, events, timeout); });
  record_results(context, events, result > 0 ? result : 0, start);
  return result;
}

SPOOR_INTERPOSE int io_pgetevents(aio_context_t context, long least, long most, struct io_event* events,
                                  struct timespec* timeout, const sigset_t* mask) {
  const PGetEventsFn next = g_io_pgetevents.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!kIoAioReturn.enabled())) return next(context, least, most, events, timeout, mask);
  const uint64_t start = spoor_port_ticks();
  const int result = inside_libaio([&] { return next(context, least, most, events, timeout, mask); });
  record_results(context, events, result > 0 ? result : 0, start);
  return result;
}

// A cancelled request's result comes back in `event` (0: cancelled).
SPOOR_INTERPOSE int io_cancel(aio_context_t context, struct iocb* block, struct io_event* event) {
  const CancelFn next = g_io_cancel.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!kIoAioReturn.enabled())) return next(context, block, event);
  const uint64_t start = spoor_port_ticks();
  const int result = inside_libaio([&] { return next(context, block, event); });
  if (result == 0) record_results(0, event, 1, start);
  return result;
}

// A context's last results are read while its ring is there.
SPOOR_INTERPOSE int io_destroy(aio_context_t context) {
  const DestroyFn next = g_io_destroy.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return -ENOSYS;
  if (SPOOR_LIKELY(!kIoAioReturn.enabled())) return next(context);
  record_ring_results(context, spoor_port_ticks(), true);
  const int result = inside_libaio([&] { return next(context); });
  if (result == 0) forget_context(context);
  return result;
}

}  // extern "C"
