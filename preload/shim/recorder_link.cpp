// Settings are kept in fixed static storage: they are read in fork children
// and in vfork children about to exec, where allocating is not safe.
#include "recorder_link.h"

#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "high_descriptors.h"

extern char** environ;

namespace spoor::preload {
namespace {

constexpr size_t kMaxVars = 16;
constexpr size_t kSettingsBytes = 8192;

char g_socket_name[108];
char g_storage[kSettingsBytes];
size_t g_storage_used = 0;
const char* g_vars[kMaxVars + 2];  // LD_PRELOAD, SPOOR_*..., null
size_t g_var_count = 0;

const char* keep(const char* a, const char* b = "") {
  const size_t na = std::strlen(a), nb = std::strlen(b);
  if (g_storage_used + na + nb + 1 > sizeof g_storage) return nullptr;
  char* at = g_storage + g_storage_used;
  std::memcpy(at, a, na);
  std::memcpy(at + na, b, nb);
  at[na + nb] = '\0';
  g_storage_used += na + nb + 1;
  return at;
}

void add_var(const char* var) {
  if (var != nullptr && g_var_count < kMaxVars) g_vars[g_var_count++] = var;
}

}  // namespace

bool capture_link_settings() {
  const char* name = std::getenv(kSocketEnv);
  if (name == nullptr || *name == '\0' || std::strlen(name) >= sizeof g_socket_name) return false;
  std::strcpy(g_socket_name, name);
  // This library's own path: the one LD_PRELOAD entry an exec must keep.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&capture_link_settings), &self) != 0 && self.dli_fname != nullptr)
    add_var(keep("LD_PRELOAD=", self.dli_fname));
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    for (const char* variable : kTracingVariables)
      if (std::strncmp(*e, variable, std::strlen(variable)) == 0) add_var(keep(*e));
  g_vars[g_var_count] = nullptr;
  return true;
}

const char* const* tracing_environment() { return g_vars; }

const char* tracing_setting(const char* name) {
  const size_t length = std::strlen(name);
  for (size_t i = 0; i < g_var_count; ++i)
    if (std::strncmp(g_vars[i], name, length) == 0) return g_vars[i] + length;
  return nullptr;
}

const char* shim_preload_path() { return tracing_setting("LD_PRELOAD="); }

namespace {
void send_note(int connection, NoteKind kind, const char* path, const char* why) {
  if (connection < 0) return;
  UntraceableNote note{};
  note.magic = kProtocolMagic;
  note.pid = static_cast<uint32_t>(getpid());
  note.kind = kind;
  std::strncpy(note.why, why, sizeof note.why - 1);
  std::strncpy(note.path, path, sizeof note.path - 1);
  // A raw call: this may run in a vfork child, where no hook may record.
  syscall(SYS_sendto, connection, &note, sizeof note, MSG_DONTWAIT | MSG_NOSIGNAL, nullptr, 0);
}
}  // namespace

void note_untraceable(int connection, const char* path, const char* why) {
  send_note(connection, kNoteUntraceable, path, why);
}

void note_exec_failed(int connection, const char* path, const char* why) {
  const int saved = errno;
  send_note(connection, kNoteExecFailed, path, why);
  errno = saved;
}

void note_own_allocator(int connection, const char* owner) { send_note(connection, kNoteOwnAllocator, owner, ""); }

void note_samples_off(int connection, const char* program, const char* tracer) {
  send_note(connection, kNoteSamplesOff, program, tracer);
}

bool request_region(Welcome* welcome, int* connection, int* region_fd, int* rule_store_fd) {
  *connection = *region_fd = *rule_store_fd = -1;
  if (g_socket_name[0] == '\0') return false;
  sockaddr_un addr;
  socklen_t len = abstract_address(g_socket_name, &addr);
  const int sock = move_descriptor_up(static_cast<int>(syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)));
  if (sock < 0 || len == 0) {
    if (sock >= 0) close(sock);
    return false;
  }
  // In another network namespace the abstract name is not there: the file.
  if (connect(sock, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    len = g_socket_name[0] == '/' ? path_address(g_socket_name, &addr) : 0;
    if (len == 0 || connect(sock, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      close(sock);
      return false;
    }
  }
  // The recorder answers within a drain cycle; a long wait means it is
  // gone or stuck, and the program must go on untraced rather than hang.
  timeval timeout{10, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const Hello hello{kProtocolMagic, kProtocolVersion, static_cast<uint32_t>(getpid()),
                    static_cast<uint32_t>(getppid())};
  int fds[kMaxPassedDescriptors] = {-1, -1};
  if (!send_message(sock, &hello, sizeof hello) || !receive_message(sock, welcome, sizeof *welcome, fds, 2) ||
      welcome->magic != kProtocolMagic || welcome->answer != Answer::traced || fds[0] < 0) {
    for (const int fd : fds)
      if (fd >= 0) close(fd);
    close(sock);
    return false;
  }
  *connection = sock;
  *region_fd = fds[0];
  *rule_store_fd = fds[1];
  return true;
}

}  // namespace spoor::preload
