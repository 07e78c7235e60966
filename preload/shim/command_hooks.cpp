// Interposed system(), popen() and pclose(): glibc starts a shell for each
// and reaps it with its own internal waitpid, which no wait hook sees. A
// shell that exits writes its own end; one killed by a signal cannot, and
// only these calls' results say how it ended. CommandStart and CommandEnd
// (process_events.h) bracket each command, and the reader gives the status
// to the child that started between them. That shell gets `environ`, from
// which the shim took its settings, so each call shows them for its length.
#include <alloca.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../process_events.h"
#include "exec_env.h"
#include "next_symbol.h"
#include "recorder_link.h"
#include "reentry_guard.h"
#include "shim_state.h"

namespace spoor::preload {
namespace {

using SystemFn = int (*)(const char*);
using PopenFn = FILE* (*)(const char*, const char*);
using PcloseFn = int (*)(FILE*);
std::atomic<SystemFn> g_system{nullptr};
std::atomic<PopenFn> g_popen{nullptr};
std::atomic<PcloseFn> g_pclose{nullptr};

// A command line longer than this is cut: the shell's own PROCESS block
// holds it whole.
constexpr size_t kMostCommandBytes = 4096;

constinit std::atomic<uint32_t> g_last_call{0};

// The calls of the streams popen() returned, until pclose(). A program
// with more pipes open at once than this gets no CommandEnd for the rest
// (their shells keep whatever end they wrote themselves).
struct OpenPipe {
  std::atomic<FILE*> file{nullptr};
  std::atomic<uint32_t> call{0};
};
constexpr size_t kMostOpenPipes = 64;
constinit OpenPipe g_open_pipes[kMostOpenPipes];

// The call number of a new CommandStart, 0 when none was written (before
// attach, events off, or in a vfork child, whose writes would land in the
// parent's rings).
uint32_t start_command(const char* command) {
  if (!shim_attached() || static_cast<uint32_t>(getpid()) != shim_pid() || !kCommandStart.enabled()) return 0;
  ReentryGuard guard;
  if (!guard.records()) return 0;
  const uint32_t call = g_last_call.fetch_add(1, std::memory_order_relaxed) + 1;
  const size_t length = strnlen(command, kMostCommandBytes);
  kCommandStart.write(call, Str{command, length});
  return call;
}

// `status`: what system() or pclose() returned, a wait status unless -1.
void end_command(uint32_t call, int status) {
  if (call == 0 || status == -1 || !(WIFEXITED(status) || WIFSIGNALED(status))) return;
  ReentryGuard guard;
  if (!guard.records() || !kCommandEnd.enabled()) return;
  kCommandEnd.write(call, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                    static_cast<uint8_t>(WIFSIGNALED(status) ? WTERMSIG(status) : 0),
                    WIFSIGNALED(status) && WCOREDUMP(status));
}

void remember_pipe(FILE* file, uint32_t call) {
  for (OpenPipe& slot : g_open_pipes) {
    FILE* expected = nullptr;
    if (slot.file.load(std::memory_order_relaxed) == nullptr &&
        slot.file.compare_exchange_strong(expected, file, std::memory_order_acq_rel)) {
      slot.call.store(call, std::memory_order_release);
      return;
    }
  }
}

// The call of `file`'s popen(), 0 when none was noted; frees its slot.
uint32_t forget_pipe(FILE* file) {
  if (file == nullptr) return 0;
  for (OpenPipe& slot : g_open_pipes) {
    if (slot.file.load(std::memory_order_acquire) != file) continue;
    const uint32_t call = slot.call.exchange(0, std::memory_order_acq_rel);
    slot.file.store(nullptr, std::memory_order_release);
    return call;
  }
  return 0;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

extern char** environ;

// The environment glibc's own posix_spawn passes to the shell: the
// program's, with the tracing settings back in it (on this stack: it must
// outlive the call). Inert, the program's own.
#define SPOOR_SHELL_ENVIRONMENT()                                                                 \
  (tracing_environment()[0] == nullptr ? environ                                                  \
                                       : fix_environment(environ, alloca(fixed_environment_bytes(environ))))

extern "C" {

SPOOR_INTERPOSE int system(const char* command) {
  // system(NULL) asks whether a shell exists; its answer is no wait status.
  if (command == nullptr) return next_symbol(g_system, "system")(command);
  const uint32_t call = start_command(command);
  int status, err;
  {
    TracingEnvironmentShown shown(SPOOR_SHELL_ENVIRONMENT());
    status = next_symbol(g_system, "system")(command);
    err = errno;
  }
  end_command(call, status);
  errno = err;
  return status;
}

SPOOR_INTERPOSE FILE* popen(const char* command, const char* mode) {
  const uint32_t call = command != nullptr ? start_command(command) : 0;
  FILE* file;
  int err;
  {
    TracingEnvironmentShown shown(SPOOR_SHELL_ENVIRONMENT());
    file = next_symbol(g_popen, "popen")(command, mode);
    err = errno;
  }
  if (file != nullptr && call != 0) remember_pipe(file, call);
  errno = err;
  return file;
}

SPOOR_INTERPOSE int pclose(FILE* file) {
  const uint32_t call = forget_pipe(file);
  const int status = next_symbol(g_pclose, "pclose")(file);
  const int err = errno;
  end_command(call, status);
  errno = err;
  return status;
}

}  // extern "C"
