// libunwind's address-check pipe, answered by the shim (unwind_pipe.h).
#include "unwind_pipe.h"

#include <fcntl.h>
#include <libunwind.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "io_interpose.h"
#include "raw_system_call.h"

namespace spoor::preload {

std::atomic<int> g_unwind_pipe_read{-1}, g_unwind_pipe_write{-1};

namespace {

// libunwind's code: the mapping of /proc/self/maps that holds one of its
// functions. 0/0 until found; begin 1 when it cannot be (nothing matches).
std::atomic<uintptr_t> g_code_begin{0}, g_code_end{0};

uintptr_t parse_hex(const char*& c, const char* end) {
  uintptr_t v = 0;
  for (; c < end; ++c) {
    const char d = *c;
    if (d >= '0' && d <= '9') v = v * 16 + static_cast<uintptr_t>(d - '0');
    else if (d >= 'a' && d <= 'f') v = v * 16 + static_cast<uintptr_t>(d - 'a' + 10);
    else break;
  }
  return v;
}

// The mapping of /proc/self/maps that holds `address`, by raw system calls
// (this may run inside the loader, a hook or a signal handler).
bool find_mapping(uintptr_t address, uintptr_t* begin, uintptr_t* end) {
  const int saved_errno = errno;
  const long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
  bool found = false;
  if (fd >= 0) {
    char buffer[4096];
    size_t kept = 0;  // bytes of an unfinished line carried over
    for (;;) {
      const long got = syscall(SYS_read, fd, buffer + kept, sizeof buffer - kept);
      if (got <= 0) break;
      const char* at = buffer;
      const char* const stop = buffer + kept + got;
      for (;;) {
        const char* line_end = at;
        while (line_end < stop && *line_end != '\n') ++line_end;
        if (line_end == stop) break;
        const char* c = at;
        const uintptr_t from = parse_hex(c, line_end);
        if (c < line_end && *c == '-') ++c;
        const uintptr_t to = parse_hex(c, line_end);
        if (address >= from && address < to) {
          *begin = from;
          *end = to;
          found = true;
          break;
        }
        at = line_end + 1;
      }
      if (found) break;
      kept = static_cast<size_t>(stop - at);
      if (kept == sizeof buffer) kept = 0;  // a line longer than the buffer: not a mapping's start
      for (size_t i = 0; i < kept; ++i) buffer[i] = at[i];
    }
    syscall(SYS_close, fd);
  }
  errno = saved_errno;
  return found;
}

}  // namespace

bool called_by_libunwind(const void* caller) {
  uintptr_t begin = g_code_begin.load(std::memory_order_acquire);
  uintptr_t end = g_code_end.load(std::memory_order_relaxed);
  if (begin == 0) {
    // Any of libunwind's local-unwinding functions: they and the pipe's
    // calls share its one code mapping.
    if (!find_mapping(reinterpret_cast<uintptr_t>(&unw_backtrace), &begin, &end)) begin = end = 1;
    g_code_end.store(end, std::memory_order_relaxed);
    g_code_begin.store(begin, std::memory_order_release);
  }
  const auto at = reinterpret_cast<uintptr_t>(caller);
  return at >= begin && at < end;
}

void adopt_unwind_pipe(const int fds[2]) {
  g_unwind_pipe_read.store(fds[0], std::memory_order_relaxed);
  g_unwind_pipe_write.store(fds[1], std::memory_order_relaxed);
  const int saved_errno = errno;
  syscall(SYS_close, fds[0]);
  syscall(SYS_close, fds[1]);
  errno = saved_errno;
}

ssize_t answer_unwind_pipe_read() {
  errno = EAGAIN;
  return -1;
}

ssize_t answer_unwind_pipe_write(const void* address, size_t size) {
  if (size == 0) return 0;
  char byte;
  iovec local{&byte, 1};
  iovec remote{const_cast<void*>(address), 1};
  const int saved_errno = errno;
  const long read = syscall(SYS_process_vm_readv, syscall(SYS_getpid), &local, 1, &remote, 1, 0);
  errno = saved_errno;
  if (read == 1) return 1;
  errno = EFAULT;
  return -1;
}

}  // namespace spoor::preload

// libunwind (Debian's 1.6) writes to its pipe with syscall(SYS_write, ...):
// the return address here is still its own, as syscall() jumped.
extern "C" long spoor_write_system_call(long number, long fd, long buffer, long size, long a4, long a5, long a6) {
  using namespace spoor::preload;
  if (is_libunwinds_pipe_call(fd, static_cast<size_t>(size), __builtin_return_address(0)))
    return answer_unwind_pipe_write(reinterpret_cast<const void*>(buffer), static_cast<size_t>(size));
  return as_libc_result(raw_system_call(number, fd, buffer, size, a4, a5, a6));
}
