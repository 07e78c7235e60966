// What the fd and stdio hooks (io_hooks.cpp, stdio_hooks.cpp) share: the
// lazily found next definition of each function, errno kept for the
// program, and the stacks their events carry.
//
// The shape of every hook:
//
//   next = g_read.get();                          // one load once resolved
//   if (!kIoRead.enabled()) return next(...);     // two loads, one branch
//   start = spoor_port_ticks();
//   result = next(...);
//   record_...(..., result, start);               // noinline, out of the way
//
// The reentry guard is not held across the real call: what that call does
// through other hooks (fopen's malloc, a library's own read wrapper) is the
// program's and is recorded. It is held while recording, so that what the
// recording itself calls (the unwinder, a module rescan) is not.
#ifndef SPOOR_PRELOAD_IO_INTERPOSE_H
#define SPOOR_PRELOAD_IO_INTERPOSE_H

#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "io_provider.h"
#include "modules.h"
#include "reentry_guard.h"
#include "stack_table.h"
#include "stdio_run.h"

namespace spoor::preload {

// Set while this thread looks a function up. Should dlsym ever call back
// into an I/O hook, that hook finds no next definition (get() returns
// null) and falls back (io_hooks.cpp: the system call itself) instead of
// looking up again, which would recurse. initial-exec: no allocation.
extern constinit thread_local bool t_io_resolving __attribute__((tls_model("initial-exec")));

// The definition an interposed function forwards to: the next one in the
// lookup order after the shim (normally libc's), found on first use, so
// that a hook works before the shim's constructor has run.
template <class Fn>
class NextFunction {
 public:
  explicit constexpr NextFunction(const char* name) : name_(name) {}

  // The function, or null when it cannot be found (inside a lookup on this
  // thread, or not defined by any later library). After the first call:
  // one load (acquire, a plain move on x86-64).
  SPOOR_ALWAYS_INLINE Fn get() {
    Fn fn = fn_.load(std::memory_order_acquire);
    return SPOOR_LIKELY(fn != nullptr) ? fn : resolve();
  }

 private:
  SPOOR_NOINLINE Fn resolve() {
    if (t_io_resolving) return nullptr;
    t_io_resolving = true;
    Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name_));
    t_io_resolving = false;
    // Two threads may both look up: they store the same address.
    if (fn != nullptr) fn_.store(fn, std::memory_order_release);
    return fn;
  }

  const char* name_;
  std::atomic<Fn> fn_{nullptr};
};

// Raises a thread's flag for a scope: the shim's marks of "inside this
// library's call", which its hooks of that library's inner calls read.
class FlagScope {
 public:
  explicit FlagScope(bool& flag) : flag_(flag) { flag_ = true; }
  ~FlagScope() { flag_ = false; }
  FlagScope(const FlagScope&) = delete;
  FlagScope& operator=(const FlagScope&) = delete;

 private:
  bool& flag_;
};

// Holds errno as the real call left it and puts it back when the recording
// is done: the unwinder, fileno() and a module rescan may all change it.
class KeptErrno {
 public:
  KeptErrno() : value_(errno) {}
  ~KeptErrno() { errno = value_; }
  KeptErrno(const KeptErrno&) = delete;
  KeptErrno& operator=(const KeptErrno&) = delete;
  int value() const { return value_; }

 private:
  int value_;
};

// Who records a file or socket call; each recording function below the
// stdio layer starts with one. The hook's own thread: its pending stdio
// runs go out first, and the event carries a stack as asked. A signal
// handler that interrupted the shim: the event alone, without a stack (the
// thread's stdio runs and the unwinder may be mid-update under it; its
// other calls are counted lost, ReentryGuard). Nobody: the shim's
// own call.
class IoRecording {
 public:
  IoRecording() {
    if (guard_.entered()) end_stdio_runs();  // the thread's pending stdio runs come first
  }
  bool on() const { return guard_.records(); }

 private:
  ReentryGuard guard_;
};

// The stack of the program's call, from inside a recording function that
// the hook called directly: skip 2 drops that function and the hook (both
// must be real frames: recorders are noinline, what a hook calls on its
// way to them is always_inline). 0 when Spoor.Stack is off.
SPOOR_ALWAYS_INLINE uint32_t caller_stack() {
  if (!kStack.enabled() || SPOOR_UNLIKELY(t_handler_in_hook)) return 0;
  rescan_modules_if_changed();  // a module loaded since may hold a frame
  return current_stack_id(2);
}

// The same, for reads and writes: only when their stacks are asked for.
SPOOR_ALWAYS_INLINE uint32_t transfer_stack() {
  if (!g_io.enabled(static_cast<uint8_t>(Level::info), kKeywordIoTransferStacks)) return 0;
  if (!kStack.enabled() || SPOOR_UNLIKELY(t_handler_in_hook)) return 0;
  rescan_modules_if_changed();
  return current_stack_id(2);
}

// A path the kernel (or libc) has read: it is NUL-terminated within
// PATH_MAX bytes, or the call failed, with ENAMETOOLONG or EFAULT. Only an
// EFAULT path may be unreadable; it is recorded as empty.
SPOOR_ALWAYS_INLINE Str path_value(const char* path, bool unreadable) {
  if (path == nullptr || unreadable) return Str("", 0);
  return Str(path, strnlen(path, 4096));
}

// A socket address the kernel has read or written: `length` bytes at
// `address`, at most sockaddr_storage's 128; empty when there is none or
// the call failed with EFAULT (the memory may be unreadable).
SPOOR_ALWAYS_INLINE Blob address_value(const void* address, size_t length, bool unreadable) {
  if (address == nullptr || unreadable) return Blob{nullptr, 0};
  return Blob{address, static_cast<uint32_t>(length < 128 ? length : 128)};
}

// One FdCreated for `fd`, named by its /proc/self/fd link (fd_create_hooks.cpp).
// The caller holds the reentry guard.
void write_fd_created(int fd, uint8_t call, uint64_t start);

}  // namespace spoor::preload

// openat2 through syscall() (it has no glibc wrapper): made, and recorded
// as an Open. syscall_hook.cpp's syscall() jumps here with its own
// arguments. Returns what syscall() returns.
extern "C" __attribute__((visibility("hidden"))) long spoor_openat2_system_call(long number, long dirfd, long path,
                                                                              long how, long size, long a5, long a6);

// fork, or clone or clone3 making a process on a copy of the caller's
// stack, through syscall(): made, the child joined as a fork child is, and
// a Fork event for it (process_hooks.cpp). syscall_hook.cpp's syscall()
// jumps here.
extern "C" __attribute__((visibility("hidden"))) long spoor_fork_system_call(long number, long a1, long a2, long a3,
                                                                           long a4, long a5, long a6);

// Whether clone3's arguments (`args`, `size` bytes) make a process on a
// copy of the caller's stack: no CLONE_VM, no stack. Read without a fault:
// false for arguments that cannot be read (the system call then says so).
extern "C" __attribute__((visibility("hidden"))) int spoor_clone3_copies_the_caller(const void* args,
                                                                                   unsigned long size);

// io_submit, io_getevents, io_pgetevents or io_destroy through syscall():
// made, and recorded as POSIX AIO's requests and results are
// (linux_aio_hooks.cpp).
// syscall_hook.cpp's syscall() jumps here.
extern "C" __attribute__((visibility("hidden"))) long spoor_linux_aio_system_call(long number, long a1, long a2,
                                                                                long a3, long a4, long a5, long a6);

// getdents64 through syscall() or its glibc wrapper: made, and the records
// naming the shim's descriptors taken out of a listing of this process's
// descriptor table (fd_listing_hooks.cpp). syscall_hook.cpp's syscall()
// jumps here.
extern "C" __attribute__((visibility("hidden"))) long spoor_getdents64_system_call(long number, long fd, long buffer,
                                                                                 long size, long a4, long a5, long a6);

// write through syscall(): libunwind's write to its address-check pipe is
// answered (unwind_pipe.h), any other made as it is. syscall_hook.cpp's
// syscall() jumps here.
extern "C" __attribute__((visibility("hidden"))) long spoor_write_system_call(long number, long fd, long buffer,
                                                                            long size, long a4, long a5, long a6);

// Interposed functions are the only symbols the shim exports.
#define SPOOR_INTERPOSE __attribute__((visibility("default")))

#endif  // SPOOR_PRELOAD_IO_INTERPOSE_H
