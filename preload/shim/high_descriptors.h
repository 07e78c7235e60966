// The shim's own descriptors, moved to the top of the program's range.
//
// A descriptor the shim opens for the life of the process would take the
// lowest free number, before the program's own: a program's first open()
// then returned 4, not 3 (the connection to spoor record; libunwind's pipe
// is closed at once, unwind_pipe.h). A shell script that writes `exec 3<
// file` would also put its file on a number the shim keeps using. Moved up
// to just below the soft RLIMIT_NOFILE (at most 1024, so select() still
// covers them), they are where programs do not look. Raw system calls:
// this runs inside hooks and may run in a vfork child.
#ifndef SPOOR_PRELOAD_HIGH_DESCRIPTORS_H
#define SPOOR_PRELOAD_HIGH_DESCRIPTORS_H

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace spoor::preload {

// The lowest number the shim's descriptors go to, or -1 when the limit is
// too low to keep them apart (they then stay where they are). 64 below the
// top leaves room for the numbers programs pick near their limit (bash's
// 255 for a script, with the usual 1024); a low limit (`ulimit -n 64`: a
// sandbox, a test of running out) keeps only 8 free above them.
inline int high_descriptor_floor() {
  rlimit limit{};
  if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &limit) != 0 || limit.rlim_cur < 16) return -1;
  const rlim_t top = limit.rlim_cur < 1024 ? limit.rlim_cur : 1024;
  return static_cast<int>(top >= 128 ? top - 64 : top - 8);
}

// `fd` moved to the first free number at or above the floor (keeping its
// close-on-exec flag); `fd` itself when that cannot be done.
inline int move_descriptor_up(int fd) {
  const int floor = high_descriptor_floor();
  if (fd < 0 || floor < 0 || fd >= floor) return fd;
  const long flags = syscall(SYS_fcntl, fd, F_GETFD);
  if (flags < 0) return fd;
  const long high = syscall(SYS_fcntl, fd, (flags & FD_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, floor);
  if (high < 0) return fd;
  syscall(SYS_close, fd);
  return static_cast<int>(high);
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_HIGH_DESCRIPTORS_H
