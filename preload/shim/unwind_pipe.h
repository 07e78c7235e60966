// libunwind's address-check pipe, answered by the shim instead of kept.
//
// libunwind (1.6) learns whether an address can be read by writing a byte
// of it to a pipe it opens on its first walk and keeps for the life of the
// process: a read() to drain the pipe, a write() of one byte from the
// address, and, when that read fails, close() of both ends and a new
// pipe2(). Kept, that pipe held two numbers of the program's descriptor
// table: a program listing its descriptors saw them, and one that closed
// every descriptor and then got those numbers for files of its own had a
// byte of them read, a byte of memory written into them, or the file
// closed under it at libunwind's next walk.
//
// So the shim lets libunwind make its pipe, closes both ends at once, and
// answers libunwind's one-byte calls on those two numbers itself: read,
// EAGAIN (an empty pipe); write (through syscall() in Debian's build, so
// the syscall() stand-in hands SYS_write here too), 1 when the byte can be
// read (process_vm_readv of the process itself, which fails with EFAULT
// where the pipe's write did), else -1 and EFAULT. The read never fails
// for another reason, so libunwind never closes those numbers to make a
// new pipe. Only calls made from libunwind's own code (by their return
// address) of one byte are answered so: the program's calls on the same
// numbers reach its files, a file libunwind opens itself on one of them
// is read as it is, and a program that uses libunwind itself gets the
// same answers.
#ifndef SPOOR_PRELOAD_UNWIND_PIPE_H
#define SPOOR_PRELOAD_UNWIND_PIPE_H

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "spoor/config.h"

namespace spoor::preload {

// The two numbers libunwind holds, -1 before it made its pipe.
extern std::atomic<int> g_unwind_pipe_read, g_unwind_pipe_write;

// Whether the call whose return address is `caller` comes from libunwind's
// code (its mapping, found in /proc/self/maps on first use: raw system
// calls, any context).
bool called_by_libunwind(const void* caller);

// Whether `fd` is one of those numbers: two loads and compares.
SPOOR_ALWAYS_INLINE bool is_unwind_pipe(int fd) {
  return fd >= 0 && (fd == g_unwind_pipe_read.load(std::memory_order_relaxed) ||
                     fd == g_unwind_pipe_write.load(std::memory_order_relaxed));
}

// Whether a read or write of `n` bytes on `fd`, returning to `caller`, is
// libunwind's on its pipe, to be answered below. Hot path of the read and
// write hooks: a compare, then two loads and compares, unless it is one.
SPOOR_ALWAYS_INLINE bool is_libunwinds_pipe_call(long fd, size_t n, const void* caller) {
  return SPOOR_UNLIKELY(n == 1 && is_unwind_pipe(static_cast<int>(fd))) && called_by_libunwind(caller);
}

// pipe/pipe2 called by libunwind, which succeeded (fds[0..1]): notes the
// numbers and closes both ends.
void adopt_unwind_pipe(const int fds[2]);

// The answers to libunwind's calls on its pipe (header comment).
ssize_t answer_unwind_pipe_read();
ssize_t answer_unwind_pipe_write(const void* address, size_t size);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_UNWIND_PIPE_H
