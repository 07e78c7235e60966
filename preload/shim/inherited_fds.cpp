// FdInherited (io_provider.h): the descriptors a process has when the shim
// attaches, so that reads and writes on them (stdin, a redirected stdout, a
// pipe from the parent) name a file rather than "fd 6". System calls only:
// this runs inside attach, and opendir or readlink would go through the
// shim's own hooks.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>

#include "io_provider.h"
#include "perf_sampler.h"
#include "shim_state.h"

namespace spoor::preload {
namespace {

// getdents64's record (no glibc declaration for it before 2.30's dirent).
struct LinuxDirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

int fd_number(const char* name) {
  if (*name == '\0') return -1;
  long n = 0;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || n > INT_MAX / 10) return -1;
    n = n * 10 + (*c - '0');
  }
  return static_cast<int>(n);
}

void describe(int fd) {
  char path[PATH_MAX];
  const size_t path_len = fd_link(fd, path, sizeof path);
  long flags = syscall(SYS_fcntl, fd, F_GETFL);
  if (flags < 0) return;  // closed since the listing
  if (syscall(SYS_fcntl, fd, F_GETFD) > 0) flags |= O_CLOEXEC;
  const long offset = syscall(SYS_lseek, fd, 0L, SEEK_CUR);
  kIoFdInherited.write(fd, Str(path, path_len), static_cast<int32_t>(flags),
                       static_cast<int64_t>(offset >= 0 ? offset : -errno));
}

// libunwind's pipe, made on the first walk (which may come before the
// attach that lists the descriptors, from a hook the loader ran early),
// with the file it was made for: a program that closes every descriptor
// and gets the same number again for a file of its own (dup2 onto it)
// must see that one in its listings.
struct NotedDescriptor {
  std::atomic<int> fd{-1};
  std::atomic<uint64_t> device{0};
  std::atomic<uint64_t> inode{0};
};
constexpr int kShimDescriptors = 4;
constinit NotedDescriptor g_shim_descriptor[kShimDescriptors] = {};

// The file `fd` is open on, by device and inode; false when it is not open.
bool file_of(int fd, uint64_t* device, uint64_t* inode) {
  const int kept = errno;
  struct stat st{};
  const bool open = syscall(SYS_fstat, fd, &st) == 0;
  errno = kept;
  *device = st.st_dev;
  *inode = st.st_ino;
  return open;
}

const NotedDescriptor* noted(int fd) {
  for (const auto& d : g_shim_descriptor)
    if (d.fd.load(std::memory_order_relaxed) == fd) return &d;
  return nullptr;
}

bool is_shim_descriptor(int fd) { return noted(fd) != nullptr; }

// Still the file the number was noted with.
bool still_noted_file(const NotedDescriptor& d, int fd) {
  uint64_t device = 0, inode = 0;
  return file_of(fd, &device, &inode) && device == d.device.load(std::memory_order_relaxed) &&
         inode == d.inode.load(std::memory_order_relaxed);
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

// The numbers are checked against what they are open on: the program may
// have closed one and got it again for a file of its own.
bool shim_owns_descriptor(int fd) {
  if (fd < 0) return false;
  if (fd == shim_connection()) return true;  // checked by device and inode there
  if (const NotedDescriptor* d = noted(fd); d != nullptr) return still_noted_file(*d, fd);
  return perf_sampler_owns(fd) && is_perf_event(fd);
}

void note_shim_descriptor(int fd) {
  if (fd < 0) return;
  uint64_t device = 0, inode = 0;
  file_of(fd, &device, &inode);
  auto take = [&](NotedDescriptor& d) {
    d.device.store(device, std::memory_order_relaxed);
    d.inode.store(inode, std::memory_order_relaxed);
  };
  // A free slot, or the number's own (libunwind made its pipe again with
  // the same numbers): the new file.
  for (auto& d : g_shim_descriptor) {
    int empty = -1;
    if (d.fd.compare_exchange_strong(empty, fd, std::memory_order_relaxed) || empty == fd) return take(d);
  }
  // Else the slot of a number the shim no longer holds.
  for (auto& d : g_shim_descriptor) {
    int was = d.fd.load(std::memory_order_relaxed);
    if (!still_noted_file(d, was) && d.fd.compare_exchange_strong(was, fd, std::memory_order_relaxed)) return take(d);
  }
}

bool shim_number_taken(int fd) {
  const NotedDescriptor* d = noted(fd);
  return d != nullptr && !still_noted_file(*d, fd);
}

bool shim_pipe_lost(int fd) {
  const NotedDescriptor* d = noted(fd);
  if (d == nullptr) return false;
  const uint64_t device = d->device.load(std::memory_order_relaxed);
  const uint64_t inode = d->inode.load(std::memory_order_relaxed);
  for (const auto& e : g_shim_descriptor) {
    const int number = e.fd.load(std::memory_order_relaxed);
    if (number >= 0 && e.device.load(std::memory_order_relaxed) == device &&
        e.inode.load(std::memory_order_relaxed) == inode && !still_noted_file(e, number))
      return true;
  }
  return false;
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
  alignas(LinuxDirent64) char buffer[4096];
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + at);
      at += entry->reclen;
      const int fd = fd_number(entry->name);
      if (fd >= 0 && fd != dir && fd != own_fd && !is_shim_descriptor(fd)) describe(fd);
    }
  }
  syscall(SYS_close, dir);
  errno = saved_errno;
}

}  // namespace spoor::preload
