// Interposed functions that give a socket its name: connect (the peer),
// bind (the local address), listen (the address it listens on) and
// accept/accept4 (the peer of the new descriptor). Each records the raw
// sockaddr (io_provider.h: Connect, Bind, Listen, Accept); readers decode
// it, so the hook neither formats nor resolves anything, allocates nothing
// and takes no lock.
//
// Cost when the events are off: as io_hooks.cpp (three loads, one branch).
// When on: one getsockopt(SO_TYPE) system call (~0.3 us; bind and listen
// add a getsockname), a copy of at most 128 bytes and an event write,
// next to a connect or accept that costs tens of microseconds. Sockets
// are named rarely next to their transfers (socket_transfer_hooks.cpp).
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

using ConnectFn = int (*)(int, const sockaddr*, socklen_t);
using ListenFn = int (*)(int, int);
using AcceptFn = int (*)(int, sockaddr*, socklen_t*);
using Accept4Fn = int (*)(int, sockaddr*, socklen_t*, int);

constinit NextFunction<ConnectFn> g_connect{"connect"}, g_bind{"bind"};
constinit NextFunction<ListenFn> g_listen{"listen"};
constinit NextFunction<AcceptFn> g_accept{"accept"};
constinit NextFunction<Accept4Fn> g_accept4{"accept4"};

// SO_TYPE (SOCK_STREAM, SOCK_DGRAM...), 0 when it cannot be read (not a
// socket, closed meanwhile). The system call itself: libc's getsockopt is
// a plain wrapper, but not calling it keeps the hook free of anything a
// library could interpose.
uint8_t socket_type(int fd) {
  int type = 0;
  socklen_t length = sizeof type;
  if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0) return 0;
  return static_cast<uint8_t>(type);
}

SPOOR_NOINLINE void record_connect(int fd, const sockaddr* address, socklen_t length, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const int value = result == 0 ? 0 : -kept.value();
  kIoConnect.write(fd, address_value(address, length, value == -EFAULT), socket_type(fd), value, start,
                   caller_stack());
}

// The socket's local address (getsockname, a system call: libc's may be
// interposed by the program), cut to the buffer; 0 when it cannot be read.
socklen_t local_address(int fd, sockaddr_storage& out) {
  socklen_t length = sizeof out;
  if (syscall(SYS_getsockname, fd, &out, &length) != 0) return 0;
  return length < sizeof out ? length : sizeof out;
}

// A bound socket's address as the kernel settled it (getsockname: the
// port it chose for port 0, which is what a listener is known by); the
// address asked for when the call failed.
SPOOR_NOINLINE void record_bind(int fd, const sockaddr* address, socklen_t length, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const int value = result == 0 ? 0 : -kept.value();
  sockaddr_storage local;
  if (value == 0) {
    if (const socklen_t n = local_address(fd, local); n > 0) {
      address = reinterpret_cast<const sockaddr*>(&local);
      length = n;
    }
  }
  kIoBind.write(fd, address_value(address, length, value == -EFAULT), socket_type(fd), value, start,
                caller_stack());
}

// listen: the address the socket listens on (getsockname, as bind's:
// a socket listening without a bind got its port from the kernel here).
SPOOR_NOINLINE void record_listen(int fd, int backlog, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const int value = result == 0 ? 0 : -kept.value();
  sockaddr_storage local;
  const socklen_t local_length = value == 0 ? local_address(fd, local) : 0;
  kIoListen.write(fd, address_value(&local, local_length, false), socket_type(fd), backlog, value, start,
                  caller_stack());
}

// The new descriptor's FdCreated, then Accept. `length`: what the kernel
// wrote back (the address's full size, which may exceed the buffer's
// `capacity`: the copy stops at the buffer).
SPOOR_NOINLINE void record_accept(uint8_t call, int fd, const sockaddr* address, socklen_t capacity,
                                  socklen_t length, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  if (result >= 0) write_fd_created(result, call, start);
  const int value = result >= 0 ? result : -kept.value();
  const size_t copied = result >= 0 ? (length < capacity ? length : capacity) : 0;
  kIoAccept.write(fd, address_value(address, copied, result < 0), socket_type(fd), call, value, start,
                  caller_stack());
}

SPOOR_ALWAYS_INLINE int sys_int(long result) { return static_cast<int>(result); }

// accept and accept4 share this body. A caller that does not ask for the
// peer's address gets none, but the kernel is given the hook's buffer, so
// that the trace has it; the caller sees the same result either way. A
// caller that asks passes a length the kernel reads too: the hook reads
// it first, for the buffer's size.
template <class Fn, class... Flags>
SPOOR_ALWAYS_INLINE int traced_accept(uint8_t call, Fn next, int fd, sockaddr* address, socklen_t* length,
                                      Flags... flags) {
  if (SPOOR_LIKELY(!kIoAccept.enabled())) return next(fd, address, length, flags...);
  sockaddr_storage own;
  socklen_t own_length = sizeof own;
  sockaddr* buffer = address;
  socklen_t* buffer_length = length;
  if (address == nullptr) {  // the kernel then ignores `length`
    buffer = reinterpret_cast<sockaddr*>(&own);
    buffer_length = &own_length;
  }
  const socklen_t capacity = *buffer_length;
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, buffer, buffer_length, flags...);
  record_accept(call, fd, buffer, capacity, result >= 0 ? *buffer_length : 0, result, start);
  return result;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

// connect is a cancellation point (not noexcept); bind is not.
SPOOR_INTERPOSE int connect(int fd, const sockaddr* address, socklen_t length) {
  const ConnectFn next = g_connect.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_connect, fd, address, length));
  if (SPOOR_LIKELY(!kIoConnect.enabled())) return next(fd, address, length);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, address, length);
  record_connect(fd, address, length, result, start);
  return result;
}

SPOOR_INTERPOSE int bind(int fd, const sockaddr* address, socklen_t length) noexcept {
  const ConnectFn next = g_bind.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_bind, fd, address, length));
  if (SPOOR_LIKELY(!kIoBind.enabled())) return next(fd, address, length);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, address, length);
  record_bind(fd, address, length, result, start);
  return result;
}

SPOOR_INTERPOSE int listen(int fd, int backlog) noexcept {
  const ListenFn next = g_listen.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_listen, fd, backlog));
  if (SPOOR_LIKELY(!kIoListen.enabled())) return next(fd, backlog);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, backlog);
  record_listen(fd, backlog, result, start);
  return result;
}

// accept and accept4 are cancellation points (not noexcept).
SPOOR_INTERPOSE int accept(int fd, sockaddr* address, socklen_t* length) {
  const AcceptFn next = g_accept.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_accept4, fd, address, length, 0));
  return traced_accept(kIoCreateAccept, next, fd, address, length);
}

SPOOR_INTERPOSE int accept4(int fd, sockaddr* address, socklen_t* length, int flags) {
  const Accept4Fn next = g_accept4.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_int(syscall(SYS_accept4, fd, address, length, flags));
  return traced_accept(kIoCreateAccept4, next, fd, address, length, flags);
}

}  // extern "C"
