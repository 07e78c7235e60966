// Interposed file-descriptor functions: the fd layer of Spoor.IO
// (io_provider.h). Each forwards to the next definition (libc's) and, when
// the provider is enabled, records the call after it returns.
//
// Cost when Spoor.IO's fd events are off: the next function's pointer, the
// provider's control pointer and its level word (three loads, one branch)
// over the real call (+1-3 ns, within noise). When on: two clock reads
// (start_ticks and the record's timestamp) and an event write, ~73 ns of
// CPU per read() on the benchmark VM (bench/io_bench.cpp, bench/RESULTS.md).
//
// Until the next definition is known (its lookup is running on this
// thread), a hook makes the system call itself: dlsym cannot recurse into
// itself through us.
#undef _FORTIFY_SOURCE  // the shim defines the functions fortify wraps
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdarg>

#include "stdio_run.h"
#include "io_interpose.h"
#include "raw_system_call.h"
#include "reentry_guard.h"
#include "unwind_pipe.h"

namespace spoor::preload {

constinit Provider g_io{"Spoor.IO"};
constinit thread_local bool t_io_resolving __attribute__((tls_model("initial-exec"))) = false;

void register_io_provider() {
  register_provider(g_io);
  const spoor_event_desc* const events[] = {&kIoOpen,   &kIoClose,  &kIoRead,    &kIoWrite, &kIoSeek,
                                            &kIoSync,   &kIoDup,    &kIoFOpen,   &kIoFDOpen, &kIoFReopen,
                                            &kIoFClose, &kIoFRead,  &kIoFWrite,  &kIoFFlush};
  for (const spoor_event_desc* event : events) register_event(*event);
}

void register_io_events_added_later() {
  register_event(kIoFdInherited);
  register_event(kIoCloseRange);
  register_event(kIoCopy);
  register_event(kIoFdCreated);
  // After FdCreated, in this order (socket_hooks.cpp, cwd_hooks.cpp).
  register_event(kIoConnect);
  register_event(kIoBind);
  register_event(kIoAccept);
  register_event(kIoSend);
  register_event(kIoReceive);
  register_event(kIoChdir);
  // Then stdio_char_hooks.cpp's runs.
  register_event(kIoFPutcRun);
  register_event(kIoFGetcRun);
  // Then socket_hooks.cpp's listen and fd_create_hooks.cpp's socket.
  register_event(kIoListen);
  register_event(kIoSocket);
  // Then stdio_hooks.cpp's runs of block and line calls.
  register_event(kIoFWriteRun);
  register_event(kIoFReadRun);
  // Then stdio_hooks.cpp's memory streams.
  register_event(kIoFMemOpen);
  // Then aio_hooks.cpp's requests and results.
  register_event(kIoAioSubmit);
  register_event(kIoAioReturn);
  // Then uring_hooks.cpp's requests, completions and unseen completions.
  register_event(kIoUringSubmit);
  register_event(kIoUringComplete);
  register_event(kIoUringUnseen);
  register_event(kIoUringFiles);
}

namespace {

using OpenFn = int (*)(const char*, int, ...);
using OpenAtFn = int (*)(int, const char*, int, ...);
using CreatFn = int (*)(const char*, mode_t);
using Open2Fn = int (*)(const char*, int);
using OpenAt2Fn = int (*)(int, const char*, int);
using FdFn = int (*)(int);
using ReadFn = ssize_t (*)(int, void*, size_t);
using ReadChkFn = ssize_t (*)(int, void*, size_t, size_t);
using PreadFn = ssize_t (*)(int, void*, size_t, off_t);
using PreadChkFn = ssize_t (*)(int, void*, size_t, off_t, size_t);
using WriteFn = ssize_t (*)(int, const void*, size_t);
using PwriteFn = ssize_t (*)(int, const void*, size_t, off_t);
using VectorFn = ssize_t (*)(int, const iovec*, int);
using PvectorFn = ssize_t (*)(int, const iovec*, int, off_t);
using Pvector2Fn = ssize_t (*)(int, const iovec*, int, off_t, int);
using SeekFn = off_t (*)(int, off_t, int);
using Dup2Fn = int (*)(int, int);
using Dup3Fn = int (*)(int, int, int);
using FcntlFn = int (*)(int, int, ...);

// off_t and off64_t are the same 64-bit type on the LP64 targets the shim
// is built for, so open64 shares open's type and so on.
static_assert(sizeof(off_t) == 8, "the shim's I/O hooks assume a 64-bit off_t");

constinit NextFunction<OpenFn> g_open{"open"}, g_open64{"open64"};
constinit NextFunction<OpenAtFn> g_openat{"openat"}, g_openat64{"openat64"};
constinit NextFunction<CreatFn> g_creat{"creat"}, g_creat64{"creat64"};
constinit NextFunction<Open2Fn> g_open_2{"__open_2"}, g_open64_2{"__open64_2"};
constinit NextFunction<OpenAt2Fn> g_openat_2{"__openat_2"}, g_openat64_2{"__openat64_2"};
constinit NextFunction<FdFn> g_close{"close"}, g_fsync{"fsync"}, g_fdatasync{"fdatasync"}, g_dup{"dup"};
constinit NextFunction<ReadFn> g_read{"read"};
constinit NextFunction<ReadChkFn> g_read_chk{"__read_chk"};
constinit NextFunction<PreadFn> g_pread{"pread"}, g_pread64{"pread64"};
constinit NextFunction<PreadChkFn> g_pread_chk{"__pread_chk"}, g_pread64_chk{"__pread64_chk"};
constinit NextFunction<WriteFn> g_write{"write"};
constinit NextFunction<PwriteFn> g_pwrite{"pwrite"}, g_pwrite64{"pwrite64"};
constinit NextFunction<VectorFn> g_readv{"readv"}, g_writev{"writev"};
constinit NextFunction<PvectorFn> g_preadv{"preadv"}, g_preadv64{"preadv64"};
constinit NextFunction<PvectorFn> g_pwritev{"pwritev"}, g_pwritev64{"pwritev64"};
constinit NextFunction<Pvector2Fn> g_preadv2{"preadv2"}, g_preadv64v2{"preadv64v2"};
constinit NextFunction<Pvector2Fn> g_pwritev2{"pwritev2"}, g_pwritev64v2{"pwritev64v2"};
constinit NextFunction<SeekFn> g_lseek{"lseek"}, g_lseek64{"lseek64"};
constinit NextFunction<Dup2Fn> g_dup2{"dup2"};
constinit NextFunction<Dup3Fn> g_dup3{"dup3"};
constinit NextFunction<FcntlFn> g_fcntl{"fcntl"}, g_fcntl64{"fcntl64"};

// --- the system calls, for a hook with no next definition -----------------
// The kernel's results in libc's convention (-1 and errno). preadv and
// friends take the offset as two longs, low half first; a 64-bit kernel
// uses only the first.

SPOOR_NOINLINE int sys_openat(int dirfd, const char* path, int flags, mode_t mode) {
  return static_cast<int>(syscall(SYS_openat, dirfd, path, flags, mode));
}
SPOOR_NOINLINE long sys_fd(long nr, int fd) { return syscall(nr, fd); }
SPOOR_NOINLINE ssize_t sys_transfer(long nr, int fd, const void* buf, size_t n) {
  return syscall(nr, fd, buf, n);
}
SPOOR_NOINLINE ssize_t sys_ptransfer(long nr, int fd, const void* buf, size_t n, off_t offset) {
  return syscall(nr, fd, buf, n, offset);
}
SPOOR_NOINLINE ssize_t sys_pvector(long nr, int fd, const iovec* iov, int count, off_t offset, int flags) {
  const auto u = static_cast<uint64_t>(offset);
  return syscall(nr, fd, iov, count, static_cast<long>(u), static_cast<long>(u >> 32), flags);
}
// Not every architecture has a dup2 system call; dup3 differs from it only
// for a copy onto itself (dup2 checks the fd, dup3 fails with EINVAL).
SPOOR_NOINLINE int sys_dup2(int fd, int target) {
  if (fd == target) return syscall(SYS_fcntl, fd, F_GETFD) < 0 ? -1 : target;
  return static_cast<int>(syscall(SYS_dup3, fd, target, 0));
}
SPOOR_NOINLINE int sys_fcntl(int fd, int cmd, void* arg) {
  return static_cast<int>(syscall(SYS_fcntl, fd, cmd, arg));
}

// --- recording (out of line: the hook's fast path stays small) -------------

SPOOR_NOINLINE void record_open(int dirfd, const char* path, int flags, mode_t mode, int fd,
                                uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const int result = fd >= 0 ? fd : -kept.value();
  kIoOpen.write(dirfd, path_value(path, result == -EFAULT), flags, static_cast<uint32_t>(mode),
                result, start, caller_stack());
}

// Reads and writes. `iov`: the vector of a vector form (null otherwise),
// summed only when the call succeeded (the kernel has then read all of it).
template <const auto& kEvent>
SPOOR_NOINLINE void record_transfer(int fd, int64_t offset, const iovec* iov, int count,
                                    uint64_t requested, ssize_t result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  if (iov != nullptr && result >= 0) {
    for (int i = 0; i < count; ++i) requested += iov[i].iov_len;
  }
  const int64_t value = result >= 0 ? result : -kept.value();
  kEvent.write(fd, static_cast<uint32_t>(iov != nullptr ? count : 0), offset, requested, value,
               start, transfer_stack());
}

// The body every read and write hook shares: forward, and when the event is
// on, time the call and record it. Always inlined, so the hook stays the
// frame right below record_transfer (its stack skip counts on it).
template <const auto& kEvent, class Fn, class... Args>
SPOOR_ALWAYS_INLINE ssize_t forward_transfer(Fn next, int fd, int64_t offset, const iovec* iov, int count,
                                             uint64_t requested, Args... args) {
  if (SPOOR_LIKELY(!kEvent.enabled())) return next(args...);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(args...);
  record_transfer<kEvent>(fd, offset, iov, count, requested, result, start);
  return result;
}

SPOOR_NOINLINE void record_close(int fd, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  kIoClose.write(fd, result == 0 ? 0 : -kept.value(), start);
}

SPOOR_NOINLINE void record_seek(int fd, off_t offset, int whence, off_t result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  kIoSeek.write(fd, whence, offset, result >= 0 ? result : -kept.value(), start);
}

SPOOR_NOINLINE void record_sync(int fd, bool data_only, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  kIoSync.write(fd, result == 0 ? 0 : -kept.value(), start, data_only);
}

SPOOR_NOINLINE void record_dup(int fd, int target, int flags, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  kIoDup.write(fd, target, flags, result >= 0 ? result : -kept.value(), start);
}

SPOOR_ALWAYS_INLINE bool needs_mode(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

// fcntl's third argument is an int, a pointer or absent, by command. It is
// taken as a pointer-sized word and passed on unchanged, which is what
// glibc's own fcntl does: an int travels in the low half of the same
// register or stack slot, and for a command without one the word read is
// whatever was there, which the kernel ignores. Only the dup commands are
// recorded.
SPOOR_ALWAYS_INLINE int traced_fcntl(FcntlFn next, int fd, int cmd, void* arg) {
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_fcntl(fd, cmd, arg);
  if (SPOOR_LIKELY(cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) || !kIoDup.enabled()) return next(fd, cmd, arg);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, cmd, arg);
  const int target = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  record_dup(fd, target, cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0, result, start);
  return result;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

// open's mode argument exists only when the flags need one: it is read
// only then, as glibc reads it.
#define SPOOR_MODE_ARGUMENT(mode, flags) \
  mode_t mode = 0;                       \
  if (needs_mode(flags)) {               \
    va_list ap;                          \
    va_start(ap, flags);                 \
    mode = va_arg(ap, mode_t);           \
    va_end(ap);                          \
  }

extern "C" {

// --- open --------------------------------------------------------------------

SPOOR_INTERPOSE int open(const char* path, int flags, ...) {
  SPOOR_MODE_ARGUMENT(mode, flags);
  const OpenFn next = g_open.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(AT_FDCWD, path, flags, mode);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(path, flags, mode);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(path, flags, mode);
  record_open(AT_FDCWD, path, flags, mode, fd, start);
  return fd;
}

SPOOR_INTERPOSE int open64(const char* path, int flags, ...) {
  SPOOR_MODE_ARGUMENT(mode, flags);
  const OpenFn next = g_open64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(AT_FDCWD, path, flags, mode);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(path, flags, mode);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(path, flags, mode);
  record_open(AT_FDCWD, path, flags, mode, fd, start);
  return fd;
}

SPOOR_INTERPOSE int openat(int dirfd, const char* path, int flags, ...) {
  SPOOR_MODE_ARGUMENT(mode, flags);
  const OpenAtFn next = g_openat.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(dirfd, path, flags, mode);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(dirfd, path, flags, mode);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(dirfd, path, flags, mode);
  record_open(dirfd, path, flags, mode, fd, start);
  return fd;
}

SPOOR_INTERPOSE int openat64(int dirfd, const char* path, int flags, ...) {
  SPOOR_MODE_ARGUMENT(mode, flags);
  const OpenAtFn next = g_openat64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(dirfd, path, flags, mode);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(dirfd, path, flags, mode);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(dirfd, path, flags, mode);
  record_open(dirfd, path, flags, mode, fd, start);
  return fd;
}

SPOOR_INTERPOSE int creat(const char* path, mode_t mode) {
  constexpr int kFlags = O_CREAT | O_WRONLY | O_TRUNC;
  const CreatFn next = g_creat.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(AT_FDCWD, path, kFlags, mode);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(path, mode);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(path, mode);
  record_open(AT_FDCWD, path, kFlags, mode, fd, start);
  return fd;
}

SPOOR_INTERPOSE int creat64(const char* path, mode_t mode) {
  constexpr int kFlags = O_CREAT | O_WRONLY | O_TRUNC;
  const CreatFn next = g_creat64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(AT_FDCWD, path, kFlags, mode);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(path, mode);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(path, mode);
  record_open(AT_FDCWD, path, kFlags, mode, fd, start);
  return fd;
}

// _FORTIFY_SOURCE's two-argument forms. They are forwarded, not mapped to
// open: libc's versions abort when the flags would need a mode.
SPOOR_INTERPOSE int __open_2(const char* path, int flags) {
  const Open2Fn next = g_open_2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(AT_FDCWD, path, flags, 0);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(path, flags);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(path, flags);
  record_open(AT_FDCWD, path, flags, 0, fd, start);
  return fd;
}

SPOOR_INTERPOSE int __open64_2(const char* path, int flags) {
  const Open2Fn next = g_open64_2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(AT_FDCWD, path, flags, 0);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(path, flags);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(path, flags);
  record_open(AT_FDCWD, path, flags, 0, fd, start);
  return fd;
}

SPOOR_INTERPOSE int __openat_2(int dirfd, const char* path, int flags) {
  const OpenAt2Fn next = g_openat_2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(dirfd, path, flags, 0);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(dirfd, path, flags);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(dirfd, path, flags);
  record_open(dirfd, path, flags, 0, fd, start);
  return fd;
}

SPOOR_INTERPOSE int __openat64_2(int dirfd, const char* path, int flags) {
  const OpenAt2Fn next = g_openat64_2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_openat(dirfd, path, flags, 0);
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(dirfd, path, flags);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(dirfd, path, flags);
  record_open(dirfd, path, flags, 0, fd, start);
  return fd;
}

SPOOR_INTERPOSE int close(int fd) {
  const FdFn next = g_close.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(sys_fd(SYS_close, fd));
  if (SPOOR_LIKELY(!kIoClose.enabled())) return next(fd);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd);
  record_close(fd, result, start);
  return result;
}

// --- read --------------------------------------------------------------------

SPOOR_INTERPOSE ssize_t read(int fd, void* buf, size_t n) {
  const ReadFn next = g_read.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_transfer(SYS_read, fd, buf, n);
  if (is_libunwinds_pipe_call(fd, n, __builtin_return_address(0))) return answer_unwind_pipe_read();
  return forward_transfer<kIoRead>(next, fd, -1, nullptr, 0, n, fd, buf, n);
}

// _FORTIFY_SOURCE's read: libc checks n against the buffer's size.
SPOOR_INTERPOSE ssize_t __read_chk(int fd, void* buf, size_t n, size_t buf_size) {
  const ReadChkFn next = g_read_chk.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_transfer(SYS_read, fd, buf, n);
  return forward_transfer<kIoRead>(next, fd, -1, nullptr, 0, n, fd, buf, n, buf_size);
}

SPOOR_INTERPOSE ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  const PreadFn next = g_pread.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_ptransfer(SYS_pread64, fd, buf, n, offset);
  return forward_transfer<kIoRead>(next, fd, offset, nullptr, 0, n, fd, buf, n, offset);
}

SPOOR_INTERPOSE ssize_t pread64(int fd, void* buf, size_t n, off_t offset) {
  const PreadFn next = g_pread64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_ptransfer(SYS_pread64, fd, buf, n, offset);
  return forward_transfer<kIoRead>(next, fd, offset, nullptr, 0, n, fd, buf, n, offset);
}

SPOOR_INTERPOSE ssize_t __pread_chk(int fd, void* buf, size_t n, off_t offset, size_t buf_size) {
  const PreadChkFn next = g_pread_chk.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_ptransfer(SYS_pread64, fd, buf, n, offset);
  return forward_transfer<kIoRead>(next, fd, offset, nullptr, 0, n, fd, buf, n, offset, buf_size);
}

SPOOR_INTERPOSE ssize_t __pread64_chk(int fd, void* buf, size_t n, off_t offset, size_t buf_size) {
  const PreadChkFn next = g_pread64_chk.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_ptransfer(SYS_pread64, fd, buf, n, offset);
  return forward_transfer<kIoRead>(next, fd, offset, nullptr, 0, n, fd, buf, n, offset, buf_size);
}

SPOOR_INTERPOSE ssize_t readv(int fd, const iovec* iov, int count) {
  const VectorFn next = g_readv.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_transfer(SYS_readv, fd, iov, static_cast<size_t>(count));
  return forward_transfer<kIoRead>(next, fd, -1, iov, count, 0, fd, iov, count);
}

SPOOR_INTERPOSE ssize_t preadv(int fd, const iovec* iov, int count, off_t offset) {
  const PvectorFn next = g_preadv.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_preadv, fd, iov, count, offset, 0);
  return forward_transfer<kIoRead>(next, fd, offset, iov, count, 0, fd, iov, count, offset);
}

SPOOR_INTERPOSE ssize_t preadv64(int fd, const iovec* iov, int count, off_t offset) {
  const PvectorFn next = g_preadv64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_preadv, fd, iov, count, offset, 0);
  return forward_transfer<kIoRead>(next, fd, offset, iov, count, 0, fd, iov, count, offset);
}

// offset -1: at the file position (and moving it), as readv.
SPOOR_INTERPOSE ssize_t preadv2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  const Pvector2Fn next = g_preadv2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_preadv2, fd, iov, count, offset, flags);
  return forward_transfer<kIoRead>(next, fd, offset, iov, count, 0, fd, iov, count, offset, flags);
}

SPOOR_INTERPOSE ssize_t preadv64v2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  const Pvector2Fn next = g_preadv64v2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_preadv2, fd, iov, count, offset, flags);
  return forward_transfer<kIoRead>(next, fd, offset, iov, count, 0, fd, iov, count, offset, flags);
}

// --- write -------------------------------------------------------------------

SPOOR_INTERPOSE ssize_t write(int fd, const void* buf, size_t n) {
  const WriteFn next = g_write.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_transfer(SYS_write, fd, buf, n);
  if (is_libunwinds_pipe_call(fd, n, __builtin_return_address(0))) return answer_unwind_pipe_write(buf, n);
  return forward_transfer<kIoWrite>(next, fd, -1, nullptr, 0, n, fd, buf, n);
}

SPOOR_INTERPOSE ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  const PwriteFn next = g_pwrite.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_ptransfer(SYS_pwrite64, fd, buf, n, offset);
  return forward_transfer<kIoWrite>(next, fd, offset, nullptr, 0, n, fd, buf, n, offset);
}

SPOOR_INTERPOSE ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
  const PwriteFn next = g_pwrite64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_ptransfer(SYS_pwrite64, fd, buf, n, offset);
  return forward_transfer<kIoWrite>(next, fd, offset, nullptr, 0, n, fd, buf, n, offset);
}

SPOOR_INTERPOSE ssize_t writev(int fd, const iovec* iov, int count) {
  const VectorFn next = g_writev.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_transfer(SYS_writev, fd, iov, static_cast<size_t>(count));
  return forward_transfer<kIoWrite>(next, fd, -1, iov, count, 0, fd, iov, count);
}

SPOOR_INTERPOSE ssize_t pwritev(int fd, const iovec* iov, int count, off_t offset) {
  const PvectorFn next = g_pwritev.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_pwritev, fd, iov, count, offset, 0);
  return forward_transfer<kIoWrite>(next, fd, offset, iov, count, 0, fd, iov, count, offset);
}

SPOOR_INTERPOSE ssize_t pwritev64(int fd, const iovec* iov, int count, off_t offset) {
  const PvectorFn next = g_pwritev64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_pwritev, fd, iov, count, offset, 0);
  return forward_transfer<kIoWrite>(next, fd, offset, iov, count, 0, fd, iov, count, offset);
}

SPOOR_INTERPOSE ssize_t pwritev2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  const Pvector2Fn next = g_pwritev2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_pwritev2, fd, iov, count, offset, flags);
  return forward_transfer<kIoWrite>(next, fd, offset, iov, count, 0, fd, iov, count, offset, flags);
}

SPOOR_INTERPOSE ssize_t pwritev64v2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  const Pvector2Fn next = g_pwritev64v2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_pvector(SYS_pwritev2, fd, iov, count, offset, flags);
  return forward_transfer<kIoWrite>(next, fd, offset, iov, count, 0, fd, iov, count, offset, flags);
}

// --- seek, sync ----------------------------------------------------------------

SPOOR_INTERPOSE off_t lseek(int fd, off_t offset, int whence) {
  const SeekFn next = g_lseek.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return syscall(SYS_lseek, fd, offset, whence);
  if (SPOOR_LIKELY(!kIoSeek.enabled())) return next(fd, offset, whence);
  const uint64_t start = spoor_port_ticks();
  const off_t result = next(fd, offset, whence);
  record_seek(fd, offset, whence, result, start);
  return result;
}

SPOOR_INTERPOSE off_t lseek64(int fd, off_t offset, int whence) {
  const SeekFn next = g_lseek64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return syscall(SYS_lseek, fd, offset, whence);
  if (SPOOR_LIKELY(!kIoSeek.enabled())) return next(fd, offset, whence);
  const uint64_t start = spoor_port_ticks();
  const off_t result = next(fd, offset, whence);
  record_seek(fd, offset, whence, result, start);
  return result;
}

SPOOR_INTERPOSE int fsync(int fd) {
  const FdFn next = g_fsync.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(sys_fd(SYS_fsync, fd));
  if (SPOOR_LIKELY(!kIoSync.enabled())) return next(fd);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd);
  record_sync(fd, false, result, start);
  return result;
}

SPOOR_INTERPOSE int fdatasync(int fd) {
  const FdFn next = g_fdatasync.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(sys_fd(SYS_fdatasync, fd));
  if (SPOOR_LIKELY(!kIoSync.enabled())) return next(fd);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd);
  record_sync(fd, true, result, start);
  return result;
}

// --- dup -----------------------------------------------------------------------

SPOOR_INTERPOSE int dup(int fd) {
  const FdFn next = g_dup.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(sys_fd(SYS_dup, fd));
  if (SPOOR_LIKELY(!kIoDup.enabled())) return next(fd);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd);
  record_dup(fd, -1, 0, result, start);
  return result;
}

SPOOR_INTERPOSE int dup2(int fd, int target) {
  const Dup2Fn next = g_dup2.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_dup2(fd, target);
  if (SPOOR_LIKELY(!kIoDup.enabled())) return next(fd, target);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, target);
  record_dup(fd, target, 0, result, start);
  return result;
}

SPOOR_INTERPOSE int dup3(int fd, int target, int flags) {
  const Dup3Fn next = g_dup3.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(syscall(SYS_dup3, fd, target, flags));
  if (SPOOR_LIKELY(!kIoDup.enabled())) return next(fd, target, flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, target, flags);
  record_dup(fd, target, flags, result, start);
  return result;
}

// fcntl: see traced_fcntl.
SPOOR_INTERPOSE int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return traced_fcntl(g_fcntl.get(), fd, cmd, arg);
}

SPOOR_INTERPOSE int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return traced_fcntl(g_fcntl64.get(), fd, cmd, arg);
}

}  // extern "C"

// openat2 through syscall(): an Open with the call's flags and mode (read
// from the program's open_how only when the kernel could read it too).
extern "C" long spoor_openat2_system_call(long number, long dirfd, long path, long how, long size, long a5, long a6) {
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return as_libc_result(raw_system_call(number, dirfd, path, how, size, a5, a6));
  const uint64_t start = spoor_port_ticks();
  const long result = raw_system_call(number, dirfd, path, how, size, a5, a6);
  const auto* request = reinterpret_cast<const struct open_how*>(how);
  const bool readable = request != nullptr && result != -EFAULT && static_cast<size_t>(size) >= sizeof(struct open_how);
  const long fd = as_libc_result(result);
  record_open(static_cast<int>(dirfd), reinterpret_cast<const char*>(path),
              readable ? static_cast<int>(request->flags) : 0, readable ? static_cast<mode_t>(request->mode) : 0,
              static_cast<int>(fd), start);
  return fd;
}
