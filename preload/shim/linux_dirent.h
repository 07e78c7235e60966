// getdents64's record, as the kernel writes it (glibc declares none before
// 2.30's <dirent.h>, and that one under another name).
#ifndef SPOOR_PRELOAD_LINUX_DIRENT_H
#define SPOOR_PRELOAD_LINUX_DIRENT_H

#include <cstdint>

namespace spoor::preload {

struct LinuxDirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;  // the record's bytes, a multiple of 8
  unsigned char type;
  char name[];
};

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_LINUX_DIRENT_H
