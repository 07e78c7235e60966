// A system call made directly, for the hooks that stand in for syscall()
// (syscall_hook.cpp): glibc's syscall() is the function they replace, so
// they cannot forward to it.
#ifndef SPOOR_PRELOAD_RAW_SYSTEM_CALL_H
#define SPOOR_PRELOAD_RAW_SYSTEM_CALL_H

#include <unistd.h>

#include <cerrno>

namespace spoor::preload {

#if defined(__x86_64__)
// The kernel's result: the value, or -errno.
inline long raw_system_call(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  long result;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}
#else
inline long raw_system_call(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  const long result = ::syscall(number, a1, a2, a3, a4, a5, a6);
  return result == -1 ? -errno : result;
}
#endif

// syscall()'s convention for the kernel's result: -1 and errno for -errno.
inline long as_libc_result(long result) {
  if (result < 0 && result > -4096) {
    errno = static_cast<int>(-result);
    return -1;
  }
  return result;
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_RAW_SYSTEM_CALL_H
