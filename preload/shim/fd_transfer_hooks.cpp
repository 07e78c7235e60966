// Interposed fd-layer functions beyond open/read/write (io_hooks.cpp):
// closing descriptors by range (close_range, closefrom) and moving bytes
// between two descriptors inside the kernel (sendfile, splice, tee,
// copy_file_range), which never pass through read or write. Same shape
// and cost as io_hooks.cpp's hooks.
//
// openat2 has no glibc wrapper: programs reach it through syscall(), whose
// stand-in (syscall_hook.cpp) records it as an Open (io_hooks.cpp).
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

using CloseRangeFn = int (*)(unsigned, unsigned, int);
using CloseFromFn = void (*)(int);
using SendfileFn = ssize_t (*)(int, int, off_t*, size_t);
using SpliceFn = ssize_t (*)(int, off_t*, int, off_t*, size_t, unsigned);
using TeeFn = ssize_t (*)(int, int, size_t, unsigned);
using CopyFileRangeFn = ssize_t (*)(int, off_t*, int, off_t*, size_t, unsigned);

constinit NextFunction<CloseRangeFn> g_close_range{"close_range"};
constinit NextFunction<CloseFromFn> g_closefrom{"closefrom"};
constinit NextFunction<SendfileFn> g_sendfile{"sendfile"}, g_sendfile64{"sendfile64"};
constinit NextFunction<SpliceFn> g_splice{"splice"};
constinit NextFunction<TeeFn> g_tee{"tee"};
constinit NextFunction<CopyFileRangeFn> g_copy_file_range{"copy_file_range"};

SPOOR_NOINLINE void record_close_range(unsigned first, unsigned last, int flags, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  kIoCloseRange.write(static_cast<int32_t>(first), last, flags, result == 0 ? 0 : -kept.value(), start);
}

// `offset`: the caller's offset pointer as it was before the call (the
// kernel advances it), or -1 when there was none.
SPOOR_NOINLINE void record_copy(uint8_t call, int fd, int64_t offset, int target, int64_t target_offset,
                                size_t requested, ssize_t result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  kIoCopy.write(fd, target, offset, target_offset, static_cast<uint64_t>(requested),
                static_cast<int64_t>(result >= 0 ? result : -kept.value()), start, transfer_stack(), call);
}

SPOOR_ALWAYS_INLINE int64_t offset_of(const off_t* offset) { return offset != nullptr ? *offset : -1; }

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

SPOOR_INTERPOSE int close_range(unsigned first, unsigned last, int flags) noexcept {
  const CloseRangeFn next = g_close_range.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(syscall(SYS_close_range, first, last, flags));
  if (SPOOR_LIKELY(!kIoCloseRange.enabled())) return next(first, last, flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(first, last, flags);
  record_close_range(first, last, flags, result, start);
  return result;
}

// glibc's closefrom calls its internal close_range, out of the shim's
// reach: it is recorded here, as close_range(first, ~0U, 0).
SPOOR_INTERPOSE void closefrom(int first) noexcept {
  const CloseFromFn next = g_closefrom.get();
  if (SPOOR_UNLIKELY(next == nullptr)) {
    syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0);
    return;
  }
  if (SPOOR_LIKELY(!kIoCloseRange.enabled())) return next(first);
  const uint64_t start = spoor_port_ticks();
  next(first);
  record_close_range(static_cast<unsigned>(first), ~0U, 0, 0, start);
}

// sendfile and sendfile64 are one system call on 64-bit targets; each
// hook forwards to its own next symbol.
static ssize_t traced_sendfile(SendfileFn next, int target, int fd, off_t* offset, size_t n) {
  if (SPOOR_UNLIKELY(next == nullptr)) return syscall(SYS_sendfile, target, fd, offset, n);
  if (SPOOR_LIKELY(!kIoCopy.enabled())) return next(target, fd, offset, n);
  const int64_t from = offset_of(offset);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(target, fd, offset, n);
  record_copy(kIoCopySendfile, fd, from, target, -1, n, result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t sendfile(int target, int fd, off_t* offset, size_t n) noexcept {
  return traced_sendfile(g_sendfile.get(), target, fd, offset, n);
}

SPOOR_INTERPOSE ssize_t sendfile64(int target, int fd, off_t* offset, size_t n) noexcept {
  return traced_sendfile(g_sendfile64.get(), target, fd, offset, n);
}

SPOOR_INTERPOSE ssize_t splice(int fd, off_t* offset, int target, off_t* target_offset, size_t n, unsigned flags) {
  const SpliceFn next = g_splice.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return syscall(SYS_splice, fd, offset, target, target_offset, n, flags);
  if (SPOOR_LIKELY(!kIoCopy.enabled())) return next(fd, offset, target, target_offset, n, flags);
  const int64_t from = offset_of(offset), to = offset_of(target_offset);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, offset, target, target_offset, n, flags);
  record_copy(kIoCopySplice, fd, from, target, to, n, result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t tee(int fd, int target, size_t n, unsigned flags) {
  const TeeFn next = g_tee.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return syscall(SYS_tee, fd, target, n, flags);
  if (SPOOR_LIKELY(!kIoCopy.enabled())) return next(fd, target, n, flags);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, target, n, flags);
  record_copy(kIoCopyTee, fd, -1, target, -1, n, result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t copy_file_range(int fd, off_t* offset, int target, off_t* target_offset, size_t n,
                                        unsigned flags) {
  const CopyFileRangeFn next = g_copy_file_range.get();
  if (SPOOR_UNLIKELY(next == nullptr))
    return syscall(SYS_copy_file_range, fd, offset, target, target_offset, n, flags);
  if (SPOOR_LIKELY(!kIoCopy.enabled())) return next(fd, offset, target, target_offset, n, flags);
  const int64_t from = offset_of(offset), to = offset_of(target_offset);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, offset, target, target_offset, n, flags);
  record_copy(kIoCopyFileRange, fd, from, target, to, n, result, start);
  return result;
}

}  // extern "C"
