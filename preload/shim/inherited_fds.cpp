// FdInherited (io_provider.h): the descriptors a process has when the shim
// attaches, so that reads and writes on them (stdin, a redirected stdout, a
// pipe from the parent) name a file rather than "fd 6". System calls only:
// this runs inside attach, and opendir or readlink would go through the
// shim's own hooks.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>

#include "io_provider.h"
#include "linux_dirent.h"
#include "perf_sampler.h"
#include "shim_state.h"

namespace spoor::preload {
namespace {

int fd_number(const char* name) {
  if (*name == '\0') return -1;
  long n = 0;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || n > INT_MAX / 10) return -1;
    n = n * 10 + (*c - '0');
  }
  return static_cast<int>(n);
}

// Static buffers here and below: this runs as the process joins the
// recorder, on its one thread, and keeps off a stack that may be small
// (ulimit -s; attach.cpp's join_recorder).
void describe(int fd) {
  static char path[PATH_MAX];
  const size_t path_len = fd_link(fd, path, sizeof path);
  long flags = syscall(SYS_fcntl, fd, F_GETFL);
  if (flags < 0) return;  // closed since the listing
  if (syscall(SYS_fcntl, fd, F_GETFD) > 0) flags |= O_CLOEXEC;
  const long offset = syscall(SYS_lseek, fd, 0L, SEEK_CUR);
  kIoFdInherited.write(fd, Str(path, path_len), static_cast<int32_t>(flags),
                       static_cast<int64_t>(offset >= 0 ? offset : -errno));
}

// A perf event still: what the sampler's numbers are open on (one
// anonymous inode for every such event, so the link says it).
bool is_perf_event(int fd) {
  static constexpr char kPerfEvent[] = "anon_inode:[perf_event]";
  char link[sizeof kPerfEvent];
  const size_t length = fd_link(fd, link, sizeof link);
  return length == sizeof kPerfEvent - 1 && std::memcmp(link, kPerfEvent, length) == 0;
}

}  // namespace

// The sampler's numbers are checked against what they are open on: the
// program may have closed one and got it again for a file of its own.
bool shim_owns_descriptor(int fd) {
  if (fd < 0) return false;
  if (fd == shim_connection()) return true;  // checked by device and inode there
  return perf_sampler_owns(fd) && is_perf_event(fd);
}

size_t fd_link(int fd, char* out, size_t capacity) {
  char link[32];
  std::memcpy(link, "/proc/self/fd/", 14);
  // The number backwards, then reversed into place.
  char digits[12];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(fd); n == 0 || v != 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  for (int i = 0; i < n; ++i) link[14 + i] = digits[n - 1 - i];
  link[14 + n] = '\0';
  const int saved_errno = errno;
  const long len = syscall(SYS_readlinkat, AT_FDCWD, link, out, capacity);
  errno = saved_errno;
  return len > 0 ? static_cast<size_t>(len) : 0;
}

void describe_inherited_fds(int own_fd) {
  if (!kIoFdInherited.enabled()) return;
  const int saved_errno = errno;
  const int dir = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) {
    errno = saved_errno;
    return;
  }
  alignas(LinuxDirent64) static char buffer[4096];
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + at);
      at += entry->reclen;
      const int fd = fd_number(entry->name);
      if (fd >= 0 && fd != dir && fd != own_fd && !shim_owns_descriptor(fd)) describe(fd);
    }
  }
  syscall(SYS_close, dir);
  errno = saved_errno;
}

}  // namespace spoor::preload
