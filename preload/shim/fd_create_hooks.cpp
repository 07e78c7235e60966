// Interposed functions that make a descriptor without opening a path
// (pipe, socket, eventfd, ...): each success writes one FdCreated per new
// descriptor (io_provider.h), named by its /proc/self/fd link, so that a
// consumer can tell one pipe from another instead of showing "fd 6".
//
// Cost when FdCreated is off: as io_hooks.cpp (three loads, one branch).
// When on: a readlinkat per new descriptor (~1-2 us) and an event write.
// Descriptors are made rarely next to the reads and writes on them.
// socket also writes Socket (its domain, type and protocol, as passed).
//
// signalfd is not here: signal_hooks.cpp interposes it (to keep the
// sampler's signal out of its mask), and its descriptor stays unnamed.
//
// accept and accept4 are in socket_hooks.cpp: they write FdCreated and
// Accept (the peer's address) together.
//
// Calls libc makes internally (popen's pipe2, a resolver's socket) reach
// the kernel without passing here: such a descriptor stays unnamed.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <climits>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"
#include "unwind_pipe.h"

namespace spoor::preload {
namespace {

using PipeFn = int (*)(int*);
using Pipe2Fn = int (*)(int*, int);
using SocketFn = int (*)(int, int, int);
using SocketpairFn = int (*)(int, int, int, int*);
using EventfdFn = int (*)(unsigned, int);
using MemfdFn = int (*)(const char*, unsigned);
using EpollCreateFn = int (*)(int);
using TimerfdFn = int (*)(int, int);

constinit NextFunction<PipeFn> g_pipe{"pipe"};
constinit NextFunction<Pipe2Fn> g_pipe2{"pipe2"};
constinit NextFunction<SocketFn> g_socket{"socket"};
constinit NextFunction<SocketpairFn> g_socketpair{"socketpair"};
constinit NextFunction<EventfdFn> g_eventfd{"eventfd"};
constinit NextFunction<MemfdFn> g_memfd_create{"memfd_create"};
constinit NextFunction<EpollCreateFn> g_epoll_create{"epoll_create"}, g_epoll_create1{"epoll_create1"};
constinit NextFunction<TimerfdFn> g_timerfd_create{"timerfd_create"};

// One FdCreated per descriptor in fds[0..count); nothing when the call
// failed (result < 0).
SPOOR_NOINLINE void record_created(uint8_t call, const int* fds, int count, int result, uint64_t start) {
  if (result < 0) return;
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  for (int i = 0; i < count; ++i) write_fd_created(fds[i], call, start);
}

// socket's FdCreated, then its Socket: the arguments as passed, no system
// call beyond FdCreated's readlinkat.
SPOOR_NOINLINE void record_socket(int domain, int type, int protocol, int result, uint64_t start) {
  if (result < 0) return;
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  if (kIoFdCreated.enabled()) write_fd_created(result, kIoCreateSocket, start);
  constexpr int kTypeFlags = SOCK_NONBLOCK | SOCK_CLOEXEC;
  kIoSocket.write(result, static_cast<uint16_t>(domain), static_cast<uint8_t>(type & ~kTypeFlags), protocol);
}

SPOOR_ALWAYS_INLINE int sys_int(long result) { return static_cast<int>(result); }

}  // namespace

void write_fd_created(int fd, uint8_t call, uint64_t start) {
  char path[PATH_MAX];
  const size_t len = fd_link(fd, path, sizeof path);
  kIoFdCreated.write(fd, Str(path, len), call, start);
}

}  // namespace spoor::preload

using namespace spoor::preload;

namespace {

// libunwind's address-check pipe, made for the shim's walks: made, then
// closed and answered by the shim (unwind_pipe.h). Recognised by the
// caller, libunwind's code, called by the shim: a program that uses
// libunwind itself and makes it open its pipe first keeps it, as it does
// untraced (not from a program's signal handler that interrupted the shim).
SPOOR_ALWAYS_INLINE int adopted_if_libunwinds(int result, const int fds[2], const void* caller) {
  if (result == 0 && t_in_shim && t_handlers_over_shim == 0 && called_by_libunwind(caller)) adopt_unwind_pipe(fds);
  return result;
}

}  // namespace

extern "C" {

SPOOR_INTERPOSE int pipe(int fds[2]) noexcept {
  const void* caller = __builtin_return_address(0);
  const PipeFn next = g_pipe.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return adopted_if_libunwinds(sys_int(syscall(SYS_pipe2, fds, 0)), fds, caller);
  if (SPOOR_UNLIKELY(t_in_shim)) return adopted_if_libunwinds(next(fds), fds, caller);
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(fds);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fds);
  record_created(kIoCreatePipe, fds, 2, result, start);
  return result;
}

SPOOR_INTERPOSE int pipe2(int fds[2], int flags) noexcept {
  const void* caller = __builtin_return_address(0);
  const Pipe2Fn next = g_pipe2.get();
  if (SPOOR_UNLIKELY(next == nullptr))
    return adopted_if_libunwinds(sys_int(syscall(SYS_pipe2, fds, flags)), fds, caller);
  if (SPOOR_UNLIKELY(t_in_shim)) return adopted_if_libunwinds(next(fds, flags), fds, caller);
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(fds, flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fds, flags);
  record_created(kIoCreatePipe2, fds, 2, result, start);
  return result;
}

SPOOR_INTERPOSE int socket(int domain, int type, int protocol) noexcept {
  const SocketFn next = g_socket.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_socket, domain, type, protocol));
  if (SPOOR_LIKELY(!kIoFdCreated.enabled() && !kIoSocket.enabled())) return next(domain, type, protocol);
  const uint64_t start = spoor_port_ticks();
  const int result = next(domain, type, protocol);
  record_socket(domain, type, protocol, result, start);
  return result;
}

SPOOR_INTERPOSE int socketpair(int domain, int type, int protocol, int fds[2]) noexcept {
  const SocketpairFn next = g_socketpair.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_socketpair, domain, type, protocol, fds));
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(domain, type, protocol, fds);
  const uint64_t start = spoor_port_ticks();
  const int result = next(domain, type, protocol, fds);
  record_created(kIoCreateSocketpair, fds, 2, result, start);
  return result;
}

SPOOR_INTERPOSE int eventfd(unsigned initial, int flags) noexcept {
  const EventfdFn next = g_eventfd.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_eventfd2, initial, flags));
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(initial, flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(initial, flags);
  record_created(kIoCreateEventfd, &result, 1, result, start);
  return result;
}

SPOOR_INTERPOSE int memfd_create(const char* name, unsigned flags) noexcept {
  const MemfdFn next = g_memfd_create.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_memfd_create, name, flags));
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(name, flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(name, flags);
  record_created(kIoCreateMemfd, &result, 1, result, start);
  return result;
}

SPOOR_INTERPOSE int epoll_create(int size) noexcept {
  const EpollCreateFn next = g_epoll_create.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_epoll_create1, 0));
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(size);
  const uint64_t start = spoor_port_ticks();
  const int result = next(size);
  record_created(kIoCreateEpoll, &result, 1, result, start);
  return result;
}

SPOOR_INTERPOSE int epoll_create1(int flags) noexcept {
  const EpollCreateFn next = g_epoll_create1.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_epoll_create1, flags));
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(flags);
  record_created(kIoCreateEpoll, &result, 1, result, start);
  return result;
}

SPOOR_INTERPOSE int timerfd_create(int clock, int flags) noexcept {
  const TimerfdFn next = g_timerfd_create.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_timerfd_create, clock, flags));
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next(clock, flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(clock, flags);
  record_created(kIoCreateTimerfd, &result, 1, result, start);
  return result;
}

}  // extern "C"
