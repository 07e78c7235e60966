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
//                                             memfd (SCM_RIGHTS)
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
inline constexpr uint32_t kProtocolVersion = 4;

struct Hello {
  uint32_t magic;
  uint32_t version;
  uint32_t pid;
  uint32_t ppid;
};

enum class Answer : uint32_t {
  traced = 0,      // the region's memfd comes with the message
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
// the program never ran.
enum NoteKind : uint32_t { kNoteUntraceable = 0, kNoteOwnAllocator = 1, kNoteExecFailed = 2 };
struct UntraceableNote {
  uint32_t magic;
  uint32_t pid;
  uint32_t kind;    // NoteKind
  char why[32];     // "static binary", "setuid program"
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

// One message carrying `fd` (or none when fd < 0). True when it was sent.
inline bool send_message(int sock, const void* data, size_t size, int fd) {
  iovec iov{const_cast<void*>(data), size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

// Receives one message of exactly `size` bytes; *fd gets a passed
// descriptor (close-on-exec) or -1. False on a short or failed read.
inline bool receive_message(int sock, void* data, size_t size, int* fd) {
  *fd = -1;
  iovec iov{data, size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n >= 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(fd, CMSG_DATA(c), sizeof(int));
  }
  return n == static_cast<ssize_t>(size);
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_PROTOCOL_H
