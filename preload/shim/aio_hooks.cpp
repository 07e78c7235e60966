// Interposed POSIX asynchronous I/O (AioSubmit, AioReturn: io_provider.h):
// aio_read, aio_write, aio_fsync, lio_listio, aio_return and their 64
// forms. glibc carries each request out on a thread of its own through
// internal read and write calls that no preloaded library sees, so the
// request as handed over and its result as collected are what a trace can
// have of it; the reader pairs them by the control block.
//
// Cost when the events are off: three loads, one branch per call. When
// on: an event write (and a stack, once per call) per request; no lock,
// no allocation. The program's control blocks are only read.
#include <aio.h>
#include <fcntl.h>

#include <cerrno>

#include "io_interpose.h"
#include "reentry_guard.h"
#include "stdio_run.h"

namespace spoor::preload {
namespace {

using AioFn = int (*)(struct aiocb*);
using Aio64Fn = int (*)(struct aiocb64*);
using AioSyncFn = int (*)(int, struct aiocb*);
using AioSync64Fn = int (*)(int, struct aiocb64*);
using LioFn = int (*)(int, struct aiocb* const[], int, struct sigevent*);
using Lio64Fn = int (*)(int, struct aiocb64* const[], int, struct sigevent*);
using AioReturnFn = ssize_t (*)(struct aiocb*);
using AioReturn64Fn = ssize_t (*)(struct aiocb64*);
using AioErrorFn = int (*)(const struct aiocb*);

constinit NextFunction<AioFn> g_aio_read{"aio_read"};
constinit NextFunction<Aio64Fn> g_aio_read64{"aio_read64"};
constinit NextFunction<AioFn> g_aio_write{"aio_write"};
constinit NextFunction<Aio64Fn> g_aio_write64{"aio_write64"};
constinit NextFunction<AioSyncFn> g_aio_fsync{"aio_fsync"};
constinit NextFunction<AioSync64Fn> g_aio_fsync64{"aio_fsync64"};
constinit NextFunction<LioFn> g_lio_listio{"lio_listio"};
constinit NextFunction<Lio64Fn> g_lio_listio64{"lio_listio64"};
constinit NextFunction<AioReturnFn> g_aio_return{"aio_return"};
constinit NextFunction<AioReturn64Fn> g_aio_return64{"aio_return64"};
constinit NextFunction<AioErrorFn> g_aio_error{"aio_error"};

// What a hook returns when the next definition cannot be found (only
// inside a lookup on this thread): there is no system call to fall back on.
int unavailable() {
  errno = ENOSYS;
  return -1;
}

uint8_t sync_op(int op) { return op == O_DSYNC ? kIoAioDataSync : kIoAioSync; }

// One request's AioSubmit. `Block` is aiocb or aiocb64 (the same layout on
// 64-bit systems, separate types to the compiler).
template <class Block>
void write_submit(const Block* block, uint8_t op, int result, uint64_t start, uint32_t stack) {
  const bool transfer = op == kIoAioRead || op == kIoAioWrite;
  kIoAioSubmit.write(block->aio_fildes, result, transfer ? static_cast<int64_t>(block->aio_offset) : int64_t{0},
                     transfer ? static_cast<uint64_t>(block->aio_nbytes) : uint64_t{0}, Ptr(block), start, stack, op);
}

template <class Block>
SPOOR_NOINLINE void record_submit(const Block* block, uint8_t op, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on() || block == nullptr) return;
  write_submit(block, op, result == 0 ? 0 : -kept.value(), start, caller_stack());
}

// lio_listio: one AioSubmit per entry that is a request (LIO_NOP entries
// and null ones are not), all with the call's stack and result.
template <class Block>
SPOOR_NOINLINE void record_list(Block* const list[], int count, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on() || list == nullptr) return;
  const int value = result == 0 ? 0 : -kept.value();
  const uint32_t stack = caller_stack();
  for (int i = 0; i < count; ++i) {
    const Block* block = list[i];
    if (block == nullptr) continue;
    if (block->aio_lio_opcode == LIO_READ) write_submit(block, kIoAioRead, value, start, stack);
    else if (block->aio_lio_opcode == LIO_WRITE) write_submit(block, kIoAioWrite, value, start, stack);
  }
}

template <class Block>
SPOOR_NOINLINE void record_return(const Block* block, ssize_t result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on() || block == nullptr) return;
  int64_t value = result;
  if (result < 0) {
    // The request's own error when it failed; aio_return's errno (EINVAL)
    // when there was none to collect.
    const AioErrorFn error = g_aio_error.get();
    const int code = error != nullptr ? error(reinterpret_cast<const struct aiocb*>(block)) : 0;
    value = -(code > 0 ? code : kept.value());
  }
  kIoAioReturn.write(Ptr(block), value, start, block->aio_fildes);
}

// The hooks' bodies, inlined into each so that it stays the frame right
// below its record_* (the stack skip counts on it).
template <class Fn, class Block>
SPOOR_ALWAYS_INLINE int forward_submit(Fn next, Block* block, uint8_t op) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable();
  if (SPOOR_LIKELY(!kIoAioSubmit.enabled())) return next(block);
  const uint64_t start = spoor_port_ticks();
  const int result = next(block);
  record_submit(block, op, result, start);
  return result;
}

template <class Fn, class Block>
SPOOR_ALWAYS_INLINE int forward_sync(Fn next, int op, Block* block) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable();
  if (SPOOR_LIKELY(!kIoAioSubmit.enabled())) return next(op, block);
  const uint64_t start = spoor_port_ticks();
  const int result = next(op, block);
  record_submit(block, sync_op(op), result, start);
  return result;
}

template <class Fn, class Block>
SPOOR_ALWAYS_INLINE int forward_list(Fn next, int mode, Block* const list[], int count, struct sigevent* event) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable();
  if (SPOOR_LIKELY(!kIoAioSubmit.enabled())) return next(mode, list, count, event);
  const uint64_t start = spoor_port_ticks();
  const int result = next(mode, list, count, event);
  record_list(list, count, result, start);
  return result;
}

template <class Fn, class Block>
SPOOR_ALWAYS_INLINE ssize_t forward_return(Fn next, Block* block) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable();
  if (SPOOR_LIKELY(!kIoAioReturn.enabled())) return next(block);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(block);
  record_return(block, result, start);
  return result;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

SPOOR_INTERPOSE int aio_read(struct aiocb* block) noexcept {
  return forward_submit(g_aio_read.get(), block, kIoAioRead);
}

SPOOR_INTERPOSE int aio_read64(struct aiocb64* block) noexcept {
  return forward_submit(g_aio_read64.get(), block, kIoAioRead);
}

SPOOR_INTERPOSE int aio_write(struct aiocb* block) noexcept {
  return forward_submit(g_aio_write.get(), block, kIoAioWrite);
}

SPOOR_INTERPOSE int aio_write64(struct aiocb64* block) noexcept {
  return forward_submit(g_aio_write64.get(), block, kIoAioWrite);
}

SPOOR_INTERPOSE int aio_fsync(int op, struct aiocb* block) noexcept {
  return forward_sync(g_aio_fsync.get(), op, block);
}

SPOOR_INTERPOSE int aio_fsync64(int op, struct aiocb64* block) noexcept {
  return forward_sync(g_aio_fsync64.get(), op, block);
}

SPOOR_INTERPOSE int lio_listio(int mode, struct aiocb* const list[], int count, struct sigevent* event) noexcept {
  return forward_list(g_lio_listio.get(), mode, list, count, event);
}

SPOOR_INTERPOSE int lio_listio64(int mode, struct aiocb64* const list[], int count, struct sigevent* event) noexcept {
  return forward_list(g_lio_listio64.get(), mode, list, count, event);
}

SPOOR_INTERPOSE ssize_t aio_return(struct aiocb* block) noexcept {
  return forward_return(g_aio_return.get(), block);
}

SPOOR_INTERPOSE ssize_t aio_return64(struct aiocb64* block) noexcept {
  return forward_return(g_aio_return64.get(), block);
}

}  // extern "C"
