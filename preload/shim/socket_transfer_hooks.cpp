// Interposed socket transfers: send, sendto, sendmsg, sendmmsg (Send) and
// recv, recvfrom, recvmsg, recvmmsg and the _FORTIFY_SOURCE forms
// __recv_chk and __recvfrom_chk (Receive). Readers count them with Write and Read, so a
// socket's bytes are in its row whichever call moved them (a socket read
// with read() is a Read, as before).
//
// Same shape and cost as io_hooks.cpp's read and write: three loads and a
// branch when off; when on, two clock reads and an event write, plus a
// copy of the peer address (at most 128 bytes) for the forms that carry
// one. sendmmsg and recvmmsg add a walk over the messages passed (their
// msg_len and iovec lengths), after the call.
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <type_traits>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

using SendFn = ssize_t (*)(int, const void*, size_t, int);
using SendToFn = ssize_t (*)(int, const void*, size_t, int, const sockaddr*, socklen_t);
using SendMsgFn = ssize_t (*)(int, const msghdr*, int);
using RecvFn = ssize_t (*)(int, void*, size_t, int);
using RecvChkFn = ssize_t (*)(int, void*, size_t, size_t, int);
using RecvFromFn = ssize_t (*)(int, void*, size_t, int, sockaddr*, socklen_t*);
using RecvFromChkFn = ssize_t (*)(int, void*, size_t, size_t, int, sockaddr*, socklen_t*);
using RecvMsgFn = ssize_t (*)(int, msghdr*, int);
using SendMmsgFn = int (*)(int, mmsghdr*, unsigned, int);
using RecvMmsgFn = int (*)(int, mmsghdr*, unsigned, int, timespec*);

constinit NextFunction<SendFn> g_send{"send"};
constinit NextFunction<SendToFn> g_sendto{"sendto"};
constinit NextFunction<SendMsgFn> g_sendmsg{"sendmsg"};
constinit NextFunction<RecvFn> g_recv{"recv"};
constinit NextFunction<RecvChkFn> g_recv_chk{"__recv_chk"};
constinit NextFunction<RecvFromFn> g_recvfrom{"recvfrom"};
constinit NextFunction<RecvFromChkFn> g_recvfrom_chk{"__recvfrom_chk"};
constinit NextFunction<RecvMsgFn> g_recvmsg{"recvmsg"};
constinit NextFunction<SendMmsgFn> g_sendmmsg{"sendmmsg"};
constinit NextFunction<RecvMmsgFn> g_recvmmsg{"recvmmsg"};

// What a call moved and where to. `message`: sendmsg's or recvmsg's
// header, whose vector is summed (only when the call succeeded: the kernel
// has then read all of it). `address`/`length`: sendto's destination or
// sendmsg's msg_name, or the source recvfrom or recvmsg filled in, with
// the length the kernel wrote back (at most the buffer's; 0 when the
// caller asked for none).
template <const auto& kEvent>
SPOOR_NOINLINE void record_socket_transfer(int fd, uint8_t call, int flags, const msghdr* message,
                                           const void* address, size_t length, uint64_t requested,
                                           ssize_t result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  uint32_t vectors = 0;
  if (message != nullptr) {
    vectors = static_cast<uint32_t>(message->msg_iovlen);
    if (result >= 0)
      for (size_t i = 0; i < message->msg_iovlen; ++i) requested += message->msg_iov[i].iov_len;
  }
  // A receive's address is the kernel's to fill: there is one only after
  // a success. A send's is the caller's: unreadable only if the call
  // failed with EFAULT.
  const bool receive = &kEvent == &kIoReceive;
  const bool unreadable = receive ? result < 0 : (result < 0 && kept.value() == EFAULT);
  const int64_t value = result >= 0 ? result : -kept.value();
  kEvent.write(fd, address_value(address, length, unreadable), call, flags, vectors, requested, value, start,
               transfer_stack());
}

// sendmmsg and recvmmsg: one event for the call (io_provider.h), its
// result the bytes of the `moved` messages (their msg_len, which the
// kernel wrote), vectors their number, requested the size of their
// buffers. address: the first message's (a receive's: when one arrived
// and the caller asked for it; `capacity` is its buffer size read before
// the call). Only the moved messages are read: the kernel has read (and
// written) those; one after them may be what made the call stop (a bad
// pointer).
template <const auto& kEvent>
SPOOR_NOINLINE void record_message_batch(int fd, uint8_t call, int flags, const mmsghdr* messages,
                                         socklen_t capacity, int moved, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  uint64_t requested = 0;
  int64_t bytes = -kept.value();
  const void* address = nullptr;
  size_t length = 0;
  if (moved >= 0) {
    bytes = 0;
    for (int m = 0; m < moved; ++m) {
      const msghdr& header = messages[m].msg_hdr;
      for (size_t i = 0; i < header.msg_iovlen; ++i) requested += header.msg_iov[i].iov_len;
      bytes += messages[m].msg_len;
    }
    const bool receive = &kEvent == &kIoReceive;
    if (moved > 0) {
      address = messages[0].msg_hdr.msg_name;
      length = receive ? (messages[0].msg_hdr.msg_namelen < capacity ? messages[0].msg_hdr.msg_namelen : capacity)
                       : messages[0].msg_hdr.msg_namelen;
    }
  }
  kEvent.write(fd, address_value(address, length, false), call, flags, static_cast<uint32_t>(moved < 0 ? 0 : moved),
               requested, bytes, start, transfer_stack());
}

// A receive's source address, as the kernel left it: `capacity` is the
// caller's buffer size read before the call, the copy stops there.
SPOOR_ALWAYS_INLINE size_t received_length(const socklen_t* length, socklen_t capacity) {
  if (length == nullptr) return 0;
  return *length < capacity ? *length : capacity;
}

SPOOR_NOINLINE ssize_t sys_socket_call(long nr, long a, long b, long c, long d, long e, long f) {
  return syscall(nr, a, b, c, d, e, f);
}

template <class T>
SPOOR_ALWAYS_INLINE long word(T value) {
  if constexpr (std::is_pointer_v<T>) return reinterpret_cast<long>(value);
  else return static_cast<long>(value);
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

// Every one of these is a cancellation point (not noexcept). A hook with
// no next definition yet makes the system call (sendto and recvfrom stand
// for send and recv, as in the kernel).
extern "C" {

SPOOR_INTERPOSE ssize_t send(int fd, const void* buf, size_t n, int flags) {
  const SendFn next = g_send.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_socket_call(SYS_sendto, fd, word(buf), word(n), flags, 0, 0);
  if (SPOOR_LIKELY(!kIoSend.enabled())) return next(fd, buf, n, flags);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, buf, n, flags);
  record_socket_transfer<kIoSend>(fd, kIoSocketSend, flags, nullptr, nullptr, 0, n, result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* address,
                               socklen_t length) {
  const SendToFn next = g_sendto.get();
  if (SPOOR_UNLIKELY(next == nullptr))
    return sys_socket_call(SYS_sendto, fd, word(buf), word(n), flags, word(address), length);
  if (SPOOR_LIKELY(!kIoSend.enabled())) return next(fd, buf, n, flags, address, length);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, buf, n, flags, address, length);
  record_socket_transfer<kIoSend>(fd, kIoSocketSendTo, flags, nullptr, address, length, n, result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  const SendMsgFn next = g_sendmsg.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_socket_call(SYS_sendmsg, fd, word(message), flags, 0, 0, 0);
  if (SPOOR_LIKELY(!kIoSend.enabled())) return next(fd, message, flags);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, message, flags);
  // A header the kernel could not read (EFAULT) is not read here either.
  const bool readable = message != nullptr && (result >= 0 || errno != EFAULT);
  record_socket_transfer<kIoSend>(fd, kIoSocketSendMsg, flags, readable ? message : nullptr,
                                  readable ? message->msg_name : nullptr, readable ? message->msg_namelen : 0, 0,
                                  result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t recv(int fd, void* buf, size_t n, int flags) {
  const RecvFn next = g_recv.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_socket_call(SYS_recvfrom, fd, word(buf), word(n), flags, 0, 0);
  if (SPOOR_LIKELY(!kIoReceive.enabled())) return next(fd, buf, n, flags);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, buf, n, flags);
  record_socket_transfer<kIoReceive>(fd, kIoSocketRecv, flags, nullptr, nullptr, 0, n, result, start);
  return result;
}

// _FORTIFY_SOURCE's recv: libc checks n against the buffer's size.
SPOOR_INTERPOSE ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buf_size, int flags) {
  const RecvChkFn next = g_recv_chk.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_socket_call(SYS_recvfrom, fd, word(buf), word(n), flags, 0, 0);
  if (SPOOR_LIKELY(!kIoReceive.enabled())) return next(fd, buf, n, buf_size, flags);
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, buf, n, buf_size, flags);
  record_socket_transfer<kIoReceive>(fd, kIoSocketRecv, flags, nullptr, nullptr, 0, n, result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* address, socklen_t* length) {
  const RecvFromFn next = g_recvfrom.get();
  if (SPOOR_UNLIKELY(next == nullptr))
    return sys_socket_call(SYS_recvfrom, fd, word(buf), word(n), flags, word(address), word(length));
  if (SPOOR_LIKELY(!kIoReceive.enabled())) return next(fd, buf, n, flags, address, length);
  const socklen_t capacity = address != nullptr && length != nullptr ? *length : 0;
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, buf, n, flags, address, length);
  const size_t got = address != nullptr ? received_length(length, capacity) : 0;
  record_socket_transfer<kIoReceive>(fd, kIoSocketRecvFrom, flags, nullptr, address, got, n, result, start);
  return result;
}

SPOOR_INTERPOSE ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buf_size, int flags, sockaddr* address,
                                       socklen_t* length) {
  const RecvFromChkFn next = g_recvfrom_chk.get();
  if (SPOOR_UNLIKELY(next == nullptr))
    return sys_socket_call(SYS_recvfrom, fd, word(buf), word(n), flags, word(address), word(length));
  if (SPOOR_LIKELY(!kIoReceive.enabled())) return next(fd, buf, n, buf_size, flags, address, length);
  const socklen_t capacity = address != nullptr && length != nullptr ? *length : 0;
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, buf, n, buf_size, flags, address, length);
  const size_t got = address != nullptr ? received_length(length, capacity) : 0;
  record_socket_transfer<kIoReceive>(fd, kIoSocketRecvFrom, flags, nullptr, address, got, n, result, start);
  return result;
}

// The kernel writes msg_namelen back; the buffer's size is read before.
SPOOR_INTERPOSE ssize_t recvmsg(int fd, msghdr* message, int flags) {
  const RecvMsgFn next = g_recvmsg.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return sys_socket_call(SYS_recvmsg, fd, word(message), flags, 0, 0, 0);
  if (SPOOR_LIKELY(!kIoReceive.enabled())) return next(fd, message, flags);
  const socklen_t capacity = message != nullptr && message->msg_name != nullptr ? message->msg_namelen : 0;
  const uint64_t start = spoor_port_ticks();
  const ssize_t result = next(fd, message, flags);
  const bool done = result >= 0 && message != nullptr;
  record_socket_transfer<kIoReceive>(fd, kIoSocketRecvMsg, flags, done ? message : nullptr,
                                     done ? message->msg_name : nullptr,
                                     done ? received_length(&message->msg_namelen, capacity) : 0, 0, result, start);
  return result;
}

// sendmmsg and recvmmsg return the number of messages moved, not bytes.
SPOOR_INTERPOSE int sendmmsg(int fd, mmsghdr* messages, unsigned count, int flags) {
  const SendMmsgFn next = g_sendmmsg.get();
  if (SPOOR_UNLIKELY(next == nullptr))
    return static_cast<int>(sys_socket_call(SYS_sendmmsg, fd, word(messages), count, flags, 0, 0));
  if (SPOOR_LIKELY(!kIoSend.enabled())) return next(fd, messages, count, flags);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, messages, count, flags);
  record_message_batch<kIoSend>(fd, kIoSocketSendMmsg, flags, messages, 0, result, start);
  return result;
}

SPOOR_INTERPOSE int recvmmsg(int fd, mmsghdr* messages, unsigned count, int flags, timespec* timeout) {
  const RecvMmsgFn next = g_recvmmsg.get();
  if (SPOOR_UNLIKELY(next == nullptr))
    return static_cast<int>(sys_socket_call(SYS_recvmmsg, fd, word(messages), count, flags, word(timeout), 0));
  if (SPOOR_LIKELY(!kIoReceive.enabled())) return next(fd, messages, count, flags, timeout);
  const socklen_t capacity = messages != nullptr && count > 0 && messages[0].msg_hdr.msg_name != nullptr
                                 ? messages[0].msg_hdr.msg_namelen
                                 : 0;
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd, messages, count, flags, timeout);
  record_message_batch<kIoReceive>(fd, kIoSocketRecvMmsg, flags, messages, capacity, result, start);
  return result;
}

}  // extern "C"
