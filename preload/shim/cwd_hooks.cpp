// Interposed chdir and fchdir (Chdir, io_provider.h): the working
// directory after the call, so that a reader can resolve the relative
// paths the program opens later (ProcessStart gives the first one).
//
// Cost when Chdir is off: three loads, one branch. When on: a getcwd
// system call into a stack buffer after a successful call (no allocation,
// no lock) and an event write; programs change directory rarely.
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

using ChdirFn = int (*)(const char*);
using FchdirFn = int (*)(int);

constinit NextFunction<ChdirFn> g_chdir{"chdir"};
constinit NextFunction<FchdirFn> g_fchdir{"fchdir"};

SPOOR_NOINLINE void record_chdir(int fd, const char* path, int result, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const int value = result == 0 ? 0 : -kept.value();
  // The system call, not libc's getcwd: that one allocates when handed no
  // buffer, and a library may interpose it. Its result counts the NUL.
  char cwd[PATH_MAX];
  long length = value == 0 ? syscall(SYS_getcwd, cwd, sizeof cwd) : -1;
  if (length <= 0 || cwd[0] != '/') length = 1;  // unreachable directories read "(unreachable)/..."
  kIoChdir.write(fd, path_value(path, value == -EFAULT), Str(cwd, static_cast<size_t>(length - 1)), value, start,
                 caller_stack());
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

SPOOR_INTERPOSE int chdir(const char* path) noexcept {
  const ChdirFn next = g_chdir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(syscall(SYS_chdir, path));
  if (SPOOR_LIKELY(!kIoChdir.enabled())) return next(path);
  const uint64_t start = spoor_port_ticks();
  const int result = next(path);
  record_chdir(-1, path, result, start);
  return result;
}

SPOOR_INTERPOSE int fchdir(int fd) noexcept {
  const FchdirFn next = g_fchdir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return static_cast<int>(syscall(SYS_fchdir, fd));
  if (SPOOR_LIKELY(!kIoChdir.enabled())) return next(fd);
  const uint64_t start = spoor_port_ticks();
  const int result = next(fd);
  record_chdir(fd, nullptr, result, start);
  return result;
}

}  // extern "C"
