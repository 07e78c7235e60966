// The tracer of this process, from /proc (tracer.h).
#include "tracer.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace spoor::preload {

namespace {

// Reads up to size - 1 bytes of `path` with raw calls (no hook sees them),
// NUL-terminated. Returns the bytes read (0 when the file cannot be read).
size_t read_small_file(const char* path, char* text, size_t size) {
  const int saved_errno = errno;
  const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  const long got = fd >= 0 ? syscall(SYS_read, fd, text, size - 1) : -1;
  if (fd >= 0) syscall(SYS_close, fd);
  errno = saved_errno;
  const size_t length = got > 0 ? static_cast<size_t>(got) : 0;
  text[length] = '\0';
  return length;
}

// The TracerPid of a /proc/PID/status text, 0 when it has none.
uint32_t tracer_pid_in_status(const char* status, size_t length) {
  static constexpr char kKey[] = "\nTracerPid:";
  constexpr size_t kKeyLength = sizeof kKey - 1;
  for (size_t at = 0; at + kKeyLength <= length; ++at) {
    if (std::memcmp(status + at, kKey, kKeyLength) != 0) continue;
    size_t c = at + kKeyLength;
    while (c < length && (status[c] == ' ' || status[c] == '\t')) ++c;
    uint32_t pid = 0;
    for (; c < length && status[c] >= '0' && status[c] <= '9'; ++c)
      pid = pid * 10 + static_cast<uint32_t>(status[c] - '0');
    return pid;
  }
  return 0;
}

}  // namespace

uint32_t ptrace_tracer(char* name, size_t name_size) {
  if (name_size > 0) name[0] = '\0';
  // The line is among the first ten (after Name, Umask, State, Tgid, Ngid,
  // Pid, PPid): the first 512 bytes hold it even with a 64-byte name.
  char status[512];
  const size_t length = read_small_file("/proc/self/status", status, sizeof status);
  const uint32_t pid = tracer_pid_in_status(status, length);
  if (pid == 0 || name_size == 0) return pid;
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%u/comm", pid);
  char comm[32];
  const size_t got = read_small_file(path, comm, sizeof comm);
  size_t n = 0;
  for (; n < got && n + 1 < name_size && comm[n] != '\n'; ++n) name[n] = comm[n];
  name[n] = '\0';
  return pid;
}

}  // namespace spoor::preload
