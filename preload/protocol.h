// How a traced process gets its region from spoor record: over a unix
// socket (SOCK_SEQPACKET, in the abstract namespace, named by $SPOOR_SOCKET).
//
//   traced process (libspoor-preload.so)     spoor record
//   ------------------------------------     ------------
//   connect; send Hello{pid, ppid}
//                                             check the peer's uid; create a
//                                             region for the pid (or find the
//                                             one its previous image used);
//                                             answer Welcome + the region's
//                                             memfd and the recording's rule
//                                             store (shared_rules.h), both
//                                             SCM_RIGHTS
//   map the region, keep the connection
//   open for the process's lifetime           a closed connection: the image
//                                             is gone (exec or exit)
//
// Every process of the tree asks for itself (at load, and in a fork child),
// so no descriptor has to survive a program that closes the ones it
// inherited (Python's subprocess does), and a process never writes into
// another's rings.
#ifndef SPOOR_PRELOAD_PROTOCOL_H
#define SPOOR_PRELOAD_PROTOCOL_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace spoor::preload {

// The recorder's socket: a path, bound both as an abstract address (tried
// first) and as a file (for a process in another network namespace, where
// the abstract names are another set).
inline constexpr const char* kSocketEnv = "SPOOR_SOCKET";
// The environment spoor record gives the program (with LD_PRELOAD), and
// that exec hooks put back: the socket and the shim's settings.
inline constexpr const char* kTracingVariables[] = {"SPOOR_SOCKET=",      "SPOOR_PROVIDERS=",
                                                    "SPOOR_STACK_DEPTH=", "SPOOR_SAMPLE_HZ=",
                                                    "SPOOR_SAMPLE_CLOCK=", "SPOOR_WAIT_WHEN_FULL="};
inline constexpr uint32_t kProtocolMagic = 0x4C4F4F50u;  // "POOL"
inline constexpr uint32_t kProtocolVersion = 5;

struct Hello {
  uint32_t magic;
  uint32_t version;
  uint32_t pid;
  uint32_t ppid;
};

enum class Answer : uint32_t {
  traced = 0,      // the region's memfd (and the rule store's) come with the message
  not_traced = 1,  // stay inert (spoor record --no-follow, or out of room)
};

struct Welcome {
  uint32_t magic;
  Answer answer;
  uint32_t exec_count;  // 0: a new process; n: its image after the n-th exec
  // The process and its parent as spoor record sees them (the kernel's word
  // from the recorder's pid namespace). A process in a pid namespace of its
  // own (unshare --pid, a sandbox) sees other numbers for both; the trace's
  // streams are under these.
  uint32_t pid;
  uint32_t ppid;
  uint32_t reserved;
};

// Sent by a traced image over its connection when it is about to exec a
// program the preload cannot reach (kind kNoteUntraceable), or when its
// own malloc keeps its heap calls from the hooks (kNoteOwnAllocator, path:
// the object that defines it), so spoor record can say so. An exec that
// then failed takes its note back (kNoteExecFailed, same path and why):
// the program never ran. An image that a debugger or tracer held from its
// start gets no CPU samples (kNoteSamplesOff, path: the program, why: the
// tracer's name).
enum NoteKind : uint32_t { kNoteUntraceable = 0, kNoteOwnAllocator = 1, kNoteExecFailed = 2, kNoteSamplesOff = 3 };
struct UntraceableNote {
  uint32_t magic;
  uint32_t pid;
  uint32_t kind;    // NoteKind
  char why[32];     // "static binary", "setuid program", "program with file capabilities"
  char path[256];   // cut to fit, NUL-terminated
};

// A sockaddr for the abstract name `name` (no leading NUL). Returns its
// length, 0 when the name is too long.
inline socklen_t abstract_address(const char* name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  const size_t n = std::strlen(name);
  if (n + 1 > sizeof addr->sun_path) return 0;
  std::memcpy(addr->sun_path + 1, name, n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// A sockaddr for the socket file at `name`. Returns its length, 0 when the
// name is too long.
inline socklen_t path_address(const char* name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  const size_t n = std::strlen(name);
  if (n + 1 > sizeof addr->sun_path) return 0;
  std::memcpy(addr->sun_path, name, n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + 1);
}

// The most descriptors one message carries: the region's and the rule
// store's.
inline constexpr int kMaxPassedDescriptors = 2;

// One message carrying the first `count` descriptors of `fds` (none when
// count is 0). True when it was sent.
inline bool send_message(int sock, const void* data, size_t size, const int* fds = nullptr, int count = 0) {
  iovec iov{const_cast<void*>(data), size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors)] = {};
  if (count > kMaxPassedDescriptors) return false;
  if (count > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * count);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * count);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * count);
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

// Receives one message of exactly `size` bytes; fds[0..count) get the
// descriptors passed with it (close-on-exec), in order, -1 past the last.
// Descriptors beyond `count` are closed. False on a short or failed read.
inline bool receive_message(int sock, void* data, size_t size, int* fds, int count) {
  for (int i = 0; i < count; ++i) fds[i] = -1;
  iovec iov{data, size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  int got = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n >= 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t passed = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < passed; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got < count) fds[got++] = fd;
      else close(fd);
    }
  }
  return n == static_cast<ssize_t>(size);
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_PROTOCOL_H
