// Interposed process functions: fork (a Fork event), the wait family
// (ProcessExit for each child reaped), and the exec and posix_spawn
// families (the environment fixed so the new image is traced; Exec, or
// ExecFailed when it returns). A fork child joins the recorder on its own
// (attach.cpp's atfork handler).
#include <alloca.h>
#include <dlfcn.h>
#include <sched.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>

#include "../process_events.h"
#include "../program_image.h"
#include "stdio_run.h"
#include "exec_env.h"
#include "next_symbol.h"
#include "raw_system_call.h"
#include "recorder_link.h"
#include "reentry_guard.h"
#include "samples.h"
#include "signal_hooks.h"
#include "shim_state.h"
#include "thread_cpu_time.h"

extern char** environ;

namespace spoor::preload {
namespace {

// In a pid namespace of its own the process names its children by
// numbers the trace does not use (shim_trace_pid): such Fork and
// ProcessExit events would name processes that are not there. The
// children name themselves (their Welcome) and say how they exit.
bool children_named_as_in_trace() { return shim_trace_pid() == shim_pid(); }

// Written whether or not this thread is inside the shim: the shim never
// reaps, so a wait call under the guard is a program's signal handler that
// interrupted it (a shell's SIGCHLD handler landing in a malloc hook). The
// write takes no lock and unwinds nothing; a ring reservation nested in an
// interrupted one takes the next record.
void record_reaped(pid_t pid, int status) {
  if (pid <= 0 || !(WIFEXITED(status) || WIFSIGNALED(status))) return;
  if (!children_named_as_in_trace()) return;
  if (kProcessExit.enabled())
    kProcessExit.write(static_cast<uint32_t>(pid), WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                       static_cast<uint8_t>(WIFSIGNALED(status) ? WTERMSIG(status) : 0),
                       WIFSIGNALED(status) && WCOREDUMP(status));
}

// In a vfork child (same memory as the parent, another pid) the shim must
// not write: the events would land in the parent's rings as the parent's.
bool in_own_process() { return static_cast<uint32_t>(getpid()) == shim_pid(); }

// What the summary says of a program started where the shim's path names
// nothing, or names a file its user may not read (a program that dropped
// privileges, a shim under a home directory of mode 700). Each fits
// UntraceableNote::why.
constexpr char kShimHidden[] = "shim hidden by chroot/namespace";
constexpr char kShimUnreadable[] = "shim unreadable by its user";

// What the exec and spawn hooks start `path` as: examine_program_image's
// answer, and two cases only they see. A program handed to another spoor
// record is that one's to trace. After chroot(), or in a mount namespace
// that hides it, the shim's path names nothing (or, after a drop of
// privileges, a file the program's user may not read), and the loader
// would print "cannot be preloaded" on the program's stderr: the program
// starts without the shim and the settings, a static one too (the
// programs it starts see the same root). One faccessat per exec; raw, for
// a vfork child.
ProgramImage image_to_start(const char* path, bool search_path, char* const* envp) {
  ProgramImage image = examine_program_image(path, search_path);
  if (holds_another_recorders_settings(envp)) {
    if (!*image.why) image.why = kInAnotherRecording;
    return image;
  }
  const char* shim = shim_preload_path();
  const int saved = errno;
  if (shim != nullptr && syscall(SYS_faccessat, AT_FDCWD, shim, R_OK) != 0) {
    if (!*image.why) image.why = errno == EACCES ? kShimUnreadable : kShimHidden;
    image.without_preload = true;
  }
  errno = saved;
  return image;
}

// Runs an exec: fixes the environment, describes it, and says if it
// returned. `exec` gets the fixed environment.
template <class Exec>
int traced_exec(const char* path, bool search_path, char* const* envp, Exec exec) {
  if (!shim_attached()) return exec(envp);
  const ProgramImage image = image_to_start(path, search_path, envp);
  char** fixed = image.without_preload ? environment_without_tracing(envp, alloca(fixed_environment_bytes(envp)))
                                       : fix_environment(envp, alloca(fixed_environment_bytes(envp)));
  const char* untraceable = image.why;
  if (*untraceable) note_untraceable(shim_connection(), path, untraceable);
  // A vfork child shares the parent's memory, thread-local flags included:
  // it only fixes the environment (on its own stack) and execs.
  if (!in_own_process()) {
    const int result = exec(fixed);
    if (*untraceable) note_exec_failed(shim_connection(), path, untraceable);
    return result;
  }
  ReentryGuard guard;
  // A signal handler that interrupted the shim may exec too: its event
  // alone is written (its thread's stdio runs may be mid-update).
  if (guard.entered()) end_stdio_runs();  // the new image starts without this thread's runs
  const bool write = kProcessExec.enabled() && guard.records();
  if (write) kProcessExec.write(Str{path ? path : ""}, Str{untraceable}, own_thread_cpu_ns());
  // No sampling signal may stay pending into the new image (before it has
  // a handler for it, the signal would kill it).
  stop_thread_sampling();
  const bool blocked = block_sample_signal_for_exec();
  const int result = exec(fixed);
  const int err = errno;
  if (*untraceable) note_exec_failed(shim_connection(), path, untraceable);
  unblock_sample_signal_after_exec_failed(blocked);
  start_thread_sampling();
  if (write) kProcessExecFailed.write(err);
  errno = err;
  return result;
}

// The arguments of execl/execlp/execle, gathered onto the stack.
#define SPOOR_GATHER_ARGS(first, args_out, ap, with_envp, envp_out)      \
  size_t count_ = 1;                                                   \
  va_start(ap, first);                                                 \
  while (va_arg(ap, char*) != nullptr) ++count_;                       \
  va_end(ap);                                                          \
  char** args_out = static_cast<char**>(alloca((count_ + 1) * sizeof(char*))); \
  va_start(ap, first);                                                 \
  args_out[0] = const_cast<char*>(first);                              \
  for (size_t i_ = 1; i_ <= count_; ++i_) args_out[i_] = va_arg(ap, char*); \
  if (with_envp) envp_out = va_arg(ap, char**);                        \
  va_end(ap)

using ForkFn = pid_t (*)();
using WaitFn = pid_t (*)(int*);
using WaitpidFn = pid_t (*)(pid_t, int*, int);
using Wait3Fn = pid_t (*)(int*, int, rusage*);
using Wait4Fn = pid_t (*)(pid_t, int*, int, rusage*);
using WaitidFn = int (*)(idtype_t, id_t, siginfo_t*, int);
using ExecveFn = int (*)(const char*, char* const*, char* const*);
using FexecveFn = int (*)(int, char* const*, char* const*);
using ExecveatFn = int (*)(int, const char*, char* const*, char* const*, int);
using SpawnFn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                        char* const*, char* const*);

std::atomic<ForkFn> g_fork{nullptr};
std::atomic<WaitFn> g_wait{nullptr};
std::atomic<WaitpidFn> g_waitpid{nullptr};
std::atomic<Wait3Fn> g_wait3{nullptr};
std::atomic<Wait4Fn> g_wait4{nullptr};
std::atomic<WaitidFn> g_waitid{nullptr};
std::atomic<ExecveFn> g_execve{nullptr}, g_execvpe{nullptr};
std::atomic<FexecveFn> g_fexecve{nullptr};
std::atomic<ExecveatFn> g_execveat{nullptr};
std::atomic<SpawnFn> g_posix_spawn{nullptr}, g_posix_spawnp{nullptr};
using CloneFn = int (*)(int (*)(void*), void*, int, void*, ...);
std::atomic<CloneFn> g_clone{nullptr};

struct ClonedStart {
  int (*fn)(void*);
  void* arg;
};

int start_cloned_process(void* start) {
  const ClonedStart s = *static_cast<const ClonedStart*>(start);
  begin_cloned_process();
  return s.fn(s.arg);
}

void record_child(pid_t child, bool spawn) {
  ReentryGuard guard;
  // records(): a signal handler that interrupted the shim may fork too.
  if (child > 0 && kProcessFork.enabled() && guard.records() && children_named_as_in_trace())
    kProcessFork.write(static_cast<uint32_t>(child), spawn);
}

// posix_spawn(p): the child's environment fixed (on this stack: the
// environment must outlive the call), and a Fork event for the child.
SPOOR_ALWAYS_INLINE int traced_spawn(SpawnFn next, bool search_path, pid_t* pid, const char* path,
                                     const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr,
                                     char* const argv[], char* const envp[]) {
  if (!shim_attached()) return next(pid, path, actions, attr, argv, envp);
  const ProgramImage image = image_to_start(path, search_path, envp);
  if (*image.why) note_untraceable(shim_connection(), path, image.why);
  char** fixed = image.without_preload ? environment_without_tracing(envp, alloca(fixed_environment_bytes(envp)))
                                       : fix_environment(envp, alloca(fixed_environment_bytes(envp)));
  pid_t child = 0;
  const int result = next(&child, path, actions, attr, argv, fixed);
  if (result != 0 && *image.why) note_exec_failed(shim_connection(), path, image.why);
  if (pid != nullptr) *pid = child;
  if (result == 0) record_child(child, true);
  return result;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

extern "C" {

// clone() making a process with memory of its own (no CLONE_VM): like a
// fork child, but glibc runs no fork handlers there, and the child went on
// writing into its parent's rings as its parent. Its function now starts
// by leaving them (begin_cloned_process). A child that shares the memory
// (a thread, or posix_spawn's vfork-like child) is passed through.
// glibc's prototype is variadic; the three optional arguments are read
// whether given or not and passed on, as glibc's own clone reads them
// (registers or stack slots the kernel ignores unless the flags ask).
SPOOR_INTERPOSE int clone(int (*fn)(void*), void* stack, int flags, void* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  pid_t* parent_tid = va_arg(ap, pid_t*);
  void* tls = va_arg(ap, void*);
  pid_t* child_tid = va_arg(ap, pid_t*);
  va_end(ap);
  const CloneFn next = next_symbol(g_clone, "clone");
  if (!shim_attached() || (flags & CLONE_VM) || !in_own_process())
    return next(fn, stack, flags, arg, parent_tid, tls, child_tid);
  {
    // As fork: this thread's pending stdio runs go out first, so the child
    // does not write its copy of them again.
    ReentryGuard guard;
    if (guard.entered()) end_stdio_runs();
  }
  ClonedStart start{fn, arg};  // the child reads its own copy of this frame
  const int pid = next(start_cloned_process, stack, flags, &start, parent_tid, tls, child_tid);
  if (pid > 0) {
    const int err = errno;
    record_child(pid, false);
    errno = err;
  }
  return pid;
}

int spoor_clone3_copies_the_caller(const void* args, unsigned long size) {
  // struct clone_args: flags at 0, stack at 40; 64 bytes in its first form.
  uint64_t head[6] = {};
  if (args == nullptr || size < 64) return 0;
  const iovec local{head, sizeof head};
  const iovec remote{const_cast<void*>(args), sizeof head};
  const long got = raw_system_call(SYS_process_vm_readv, raw_system_call(SYS_getpid, 0, 0, 0, 0, 0, 0),
                                   reinterpret_cast<long>(&local), 1, reinterpret_cast<long>(&remote), 1, 0);
  return got == static_cast<long>(sizeof head) && (head[0] & CLONE_VM) == 0 && head[5] == 0;
}

// fork, or clone or clone3 without CLONE_VM and without a stack, through syscall():
// the child returns on a copy of this frame, like clone()'s child above
// but without a function of its own to start, so it leaves its parent's
// rings here before it returns 0 to the program.
long spoor_fork_system_call(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  if (!shim_attached() || !in_own_process()) return as_libc_result(raw_system_call(number, a1, a2, a3, a4, a5, a6));
  {
    ReentryGuard guard;
    if (guard.entered()) end_stdio_runs();
  }
  const long pid = raw_system_call(number, a1, a2, a3, a4, a5, a6);
  if (pid == 0) {
    begin_cloned_process();
    return 0;
  }
  if (pid > 0) record_child(static_cast<pid_t>(pid), false);
  return as_libc_result(pid);
}

SPOOR_INTERPOSE pid_t fork() {
  // This thread's pending stdio runs go out before the fork, so the
  // child does not inherit a copy and write it again.
  if (shim_attached() && in_own_process()) {
    ReentryGuard guard;
    if (guard.entered()) end_stdio_runs();
  }
  const pid_t pid = next_symbol(g_fork, "fork")();
  if (pid > 0) {
    const int err = errno;
    record_child(pid, false);
    errno = err;
  }
  return pid;
}

SPOOR_INTERPOSE pid_t wait(int* status) {
  int local = 0;
  const pid_t pid = next_symbol(g_wait, "wait")(&local);
  const int err = errno;
  if (status != nullptr) *status = local;
  record_reaped(pid, local);
  errno = err;
  return pid;
}

SPOOR_INTERPOSE pid_t waitpid(pid_t which, int* status, int options) {
  int local = 0;
  const pid_t pid = next_symbol(g_waitpid, "waitpid")(which, &local, options);
  const int err = errno;
  if (status != nullptr) *status = local;
  record_reaped(pid, local);
  errno = err;
  return pid;
}

SPOOR_INTERPOSE pid_t wait3(int* status, int options, struct rusage* usage) {
  int local = 0;
  const pid_t pid = next_symbol(g_wait3, "wait3")(&local, options, usage);
  const int err = errno;
  if (status != nullptr) *status = local;
  record_reaped(pid, local);
  errno = err;
  return pid;
}

SPOOR_INTERPOSE pid_t wait4(pid_t which, int* status, int options, struct rusage* usage) {
  int local = 0;
  const pid_t pid = next_symbol(g_wait4, "wait4")(which, &local, options, usage);
  const int err = errno;
  if (status != nullptr) *status = local;
  record_reaped(pid, local);
  errno = err;
  return pid;
}

SPOOR_INTERPOSE int waitid(idtype_t type, id_t id, siginfo_t* info, int options) {
  const int result = next_symbol(g_waitid, "waitid")(type, id, info, options);
  const int err = errno;
  if (result == 0 && info != nullptr && info->si_pid != 0 && !(options & WNOWAIT)) {
    const int code = info->si_code;
    if (code == CLD_EXITED)
      record_reaped(info->si_pid, W_EXITCODE(info->si_status, 0));
    else if (code == CLD_KILLED || code == CLD_DUMPED)
      record_reaped(info->si_pid, info->si_status | (code == CLD_DUMPED ? WCOREFLAG : 0));
  }
  errno = err;
  return result;
}

SPOOR_INTERPOSE int execve(const char* path, char* const argv[], char* const envp[]) {
  return traced_exec(path, false, envp, [&](char* const* env) { return next_symbol(g_execve, "execve")(path, argv, env); });
}

SPOOR_INTERPOSE int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return traced_exec(file, true, envp, [&](char* const* env) { return next_symbol(g_execvpe, "execvpe")(file, argv, env); });
}

SPOOR_INTERPOSE int execv(const char* path, char* const argv[]) { return execve(path, argv, environ); }

SPOOR_INTERPOSE int execvp(const char* file, char* const argv[]) { return execvpe(file, argv, environ); }

SPOOR_INTERPOSE int execl(const char* path, const char* arg, ...) {
  va_list ap;
  char** envp = nullptr;
  SPOOR_GATHER_ARGS(arg, args, ap, false, envp);
  (void)envp;
  return execve(path, args, environ);
}

SPOOR_INTERPOSE int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  char** envp = nullptr;
  SPOOR_GATHER_ARGS(arg, args, ap, false, envp);
  (void)envp;
  return execvpe(file, args, environ);
}

SPOOR_INTERPOSE int execle(const char* path, const char* arg, ...) {
  va_list ap;
  char** envp = nullptr;
  SPOOR_GATHER_ARGS(arg, args, ap, true, envp);
  return execve(path, args, envp);
}

SPOOR_INTERPOSE int fexecve(int fd, char* const argv[], char* const envp[]) {
  return traced_exec(nullptr, false, envp, [&](char* const* env) { return next_symbol(g_fexecve, "fexecve")(fd, argv, env); });
}

SPOOR_INTERPOSE int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
  return traced_exec(path, false, envp,
                     [&](char* const* env) { return next_symbol(g_execveat, "execveat")(dirfd, path, argv, env, flags); });
}

SPOOR_INTERPOSE int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                                const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  return traced_spawn(next_symbol(g_posix_spawn, "posix_spawn"), false, pid, path, actions, attr, argv, envp);
}

SPOOR_INTERPOSE int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                                 const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  return traced_spawn(next_symbol(g_posix_spawnp, "posix_spawnp"), true, pid, file, actions, attr, argv, envp);
}

}  // extern "C"
