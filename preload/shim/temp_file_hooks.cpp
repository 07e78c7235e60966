// Interposed functions that create and open a temporary file: the mkstemp
// family and tmpfile. libc opens the file with its own internal open, which
// no interposed open sees, so without these the descriptor they return
// stays unnamed ("fd 6 in pid P") while the program's later open of the
// same path (sort reopens its spill files by name) is a row of its own.
//
// mkstemp and its kin write one Open (io_provider.h) with the name they
// chose (the template, filled in, which is the caller's own buffer), and
// the flags and mode they open with: O_RDWR | O_CREAT | O_EXCL and the
// caller's extra flags, mode 0600. A failed call writes an Open with
// -errno and the template as passed. tmpfile's file has no name (libc
// unlinks it, or opens it O_TMPFILE): it writes one FdCreated with the
// descriptor's /proc/self/fd link ("/tmp/#123 (deleted)"); its stream's
// reads and writes carry the descriptor like any stream's.
//
// Cost when Open is off: three loads and a branch, as every io hook.
// mkdtemp and mktemp open nothing and are not here.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdio>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

using MkstempFn = int (*)(char*);
using MkostempFn = int (*)(char*, int);
using MkstempsFn = int (*)(char*, int);
using MkostempsFn = int (*)(char*, int, int);
using TmpfileFn = FILE* (*)();

constinit NextFunction<MkstempFn> g_mkstemp{"mkstemp"}, g_mkstemp64{"mkstemp64"};
constinit NextFunction<MkostempFn> g_mkostemp{"mkostemp"}, g_mkostemp64{"mkostemp64"};
constinit NextFunction<MkstempsFn> g_mkstemps{"mkstemps"}, g_mkstemps64{"mkstemps64"};
constinit NextFunction<MkostempsFn> g_mkostemps{"mkostemps"}, g_mkostemps64{"mkostemps64"};
constinit NextFunction<TmpfileFn> g_tmpfile{"tmpfile"}, g_tmpfile64{"tmpfile64"};

// What glibc's __gen_tempname opens a file with (mode 0600).
constexpr int kTempFlags = O_RDWR | O_CREAT | O_EXCL;
constexpr uint32_t kTempMode = 0600;

SPOOR_NOINLINE void record_temp_open(const char* path, int extra_flags, int fd, uint64_t start) {
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const int result = fd >= 0 ? fd : -kept.value();
  kIoOpen.write(AT_FDCWD, path_value(path, result == -EFAULT), kTempFlags | extra_flags, kTempMode, result,
                start, caller_stack());
}

SPOOR_NOINLINE void record_tmpfile(FILE* stream, uint64_t start) {
  if (stream == nullptr) return;
  KeptErrno kept;
  IoRecording recording;
  if (!recording.on()) return;
  const int fd = fileno(stream);
  char path[PATH_MAX];
  const size_t len = fd_link(fd, path, sizeof path);
  kIoFdCreated.write(fd, Str(path, len), kIoCreateTmpfile, start);
}

// Without libc's function (called before dlsym could answer): fail as
// libc does when it cannot make the file. Nothing in the shim's own start
// makes temporary files, so this is never reached in practice.
SPOOR_NOINLINE int unavailable() {
  errno = ENOSYS;
  return -1;
}

template <class Fn, class... Args>
SPOOR_ALWAYS_INLINE int traced_temp(Fn next, char* path, int extra_flags, Args... args) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable();
  if (SPOOR_LIKELY(!kIoOpen.enabled())) return next(path, args...);
  const uint64_t start = spoor_port_ticks();
  const int fd = next(path, args...);
  record_temp_open(path, extra_flags, fd, start);
  return fd;
}

SPOOR_ALWAYS_INLINE FILE* traced_tmpfile(TmpfileFn next) {
  if (SPOOR_UNLIKELY(next == nullptr)) {
    errno = ENOSYS;
    return nullptr;
  }
  if (SPOOR_LIKELY(!kIoFdCreated.enabled())) return next();
  const uint64_t start = spoor_port_ticks();
  FILE* stream = next();
  record_tmpfile(stream, start);
  return stream;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

SPOOR_INTERPOSE int mkstemp(char* path) { return traced_temp(g_mkstemp.get(), path, 0); }
SPOOR_INTERPOSE int mkstemp64(char* path) { return traced_temp(g_mkstemp64.get(), path, 0); }

SPOOR_INTERPOSE int mkostemp(char* path, int flags) { return traced_temp(g_mkostemp.get(), path, flags, flags); }
SPOOR_INTERPOSE int mkostemp64(char* path, int flags) {
  return traced_temp(g_mkostemp64.get(), path, flags, flags);
}

SPOOR_INTERPOSE int mkstemps(char* path, int suffix_length) {
  return traced_temp(g_mkstemps.get(), path, 0, suffix_length);
}
SPOOR_INTERPOSE int mkstemps64(char* path, int suffix_length) {
  return traced_temp(g_mkstemps64.get(), path, 0, suffix_length);
}

SPOOR_INTERPOSE int mkostemps(char* path, int suffix_length, int flags) {
  return traced_temp(g_mkostemps.get(), path, flags, suffix_length, flags);
}
SPOOR_INTERPOSE int mkostemps64(char* path, int suffix_length, int flags) {
  return traced_temp(g_mkostemps64.get(), path, flags, suffix_length, flags);
}

SPOOR_INTERPOSE FILE* tmpfile() { return traced_tmpfile(g_tmpfile.get()); }
SPOOR_INTERPOSE FILE* tmpfile64() { return traced_tmpfile(g_tmpfile64.get()); }

}  // extern "C"
