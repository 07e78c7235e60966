// The running-thread table of live_threads.h, and the two ways a process
// ends that the shim sees: its destructor (exit(), return from main; the
// status from an on_exit handler) and the _exit/_Exit hooks. A process
// killed by a signal, or one that calls the exit_group system call itself,
// runs neither: the ProcessExit of whoever reaps it (its parent's wait
// hook, or the recorder) then ends its threads (readers take a thread
// without a ThreadEnd to end with its process).
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "../process_events.h"
#include "live_threads.h"
#include "stdio_run.h"
#include "thread_cpu_time.h"
#include "next_symbol.h"
#include "reentry_guard.h"
#include "shim_state.h"
#include "thread_provider.h"

namespace spoor::preload {
namespace {

// 0: a free slot. Threads start and end rarely next to allocations, so a
// linear scan (a few microseconds at worst) is the whole cost.
constinit std::atomic<uint32_t> g_running[kMaxLiveThreads] = {};
// One past the highest slot ever taken: the scans stop there. Without it
// every process's exit exchanged all 4,096 slots and every fork child
// cleared them: 16 KiB written, 4 pages faulted in, for a process that
// had one thread.
constinit std::atomic<uint32_t> g_slots_used{0};

uint32_t slots_used() {
  const uint32_t used = g_slots_used.load(std::memory_order_acquire);
  return used < kMaxLiveThreads ? used : kMaxLiveThreads;
}
constinit std::atomic<bool> g_ended{false};

using ExitFn = void (*)(int);
std::atomic<ExitFn> g_exit{nullptr};
std::atomic<ExitFn> g_Exit{nullptr};

// exit()'s status, from the on_exit handler, for the destructor that
// writes the process's end; kNoStatus before.
constexpr int kNoStatus = -1;
constinit std::atomic<int> g_exit_status{kNoStatus};
constinit std::atomic<bool> g_exit_written{false};

// The process's own word on how it ends, once. Its parent may reap it
// where no hook sees the status (glibc's system() and pclose() wait inside
// libc), or never (it ends first): without this the trace would not say.
void write_own_exit(int status) {
  if (g_exit_written.exchange(true, std::memory_order_acq_rel)) return;
  if (kProcessExit.enabled()) kProcessExit.write(shim_trace_pid(), status & 0xff, 0, false);
}

}  // namespace

void note_thread_running(uint32_t tid) {
  if (tid == 0) return;
  for (uint32_t i = 0; i < kMaxLiveThreads; ++i) {
    std::atomic<uint32_t>& slot = g_running[i];
    if (slot.load(std::memory_order_relaxed) != 0) continue;
    // The bound first: a scan that sees the thread's slot taken sees it
    // within the bound (a failed take leaves the bound one too high,
    // which only lengthens scans).
    uint32_t used = g_slots_used.load(std::memory_order_relaxed);
    while (used < i + 1 && !g_slots_used.compare_exchange_weak(used, i + 1, std::memory_order_acq_rel)) {
    }
    uint32_t expected = 0;
    if (slot.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) return;
  }
}

bool note_thread_ended(uint32_t tid) {
  if (tid == 0) return true;
  for (uint32_t i = 0, used = slots_used(); i < used; ++i) {
    std::atomic<uint32_t>& slot = g_running[i];
    uint32_t expected = tid;
    // Whoever takes the slot writes the thread's ThreadEnd: this thread,
    // or end_running_threads_with_process on another.
    if (slot.load(std::memory_order_relaxed) == tid &&
        slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel))
      return true;
  }
  // Not noted (the table was full, or it started before the shim could
  // note it): its own end is still the one to write, unless the process's
  // end came first.
  return !g_ended.load(std::memory_order_acquire);
}

void end_running_threads_with_process(int exit_status) {
  // A vfork child shares its parent's memory and rings, and an untraced
  // fork child has none: only the attached process ends its threads.
  if (!shim_attached() || static_cast<uint32_t>(syscall(SYS_getpid)) != shim_pid()) return;
  // _exit from a signal handler that interrupted this thread inside the
  // shim: an event write may be half done on it. The threads go without.
  ReentryGuard guard;
  if (!guard.entered()) return;
  // The ending thread's pending stdio runs (stdio_run.h); the other
  // threads' are in their own storage, out of reach.
  end_stdio_runs();
  if (g_ended.exchange(true, std::memory_order_acq_rel)) return;
  for (uint32_t i = 0, used = slots_used(); i < used; ++i) {
    const uint32_t tid = g_running[i].exchange(0, std::memory_order_acq_rel);
    if (tid != 0 && kThreadEnd.enabled()) kThreadEnd.write(thread_cpu_ns(tid), tid, true);
  }
  if (exit_status != kNoStatus) write_own_exit(exit_status);
}

void forget_running_threads_after_fork() {
  for (uint32_t i = 0, used = slots_used(); i < used; ++i) g_running[i].store(0, std::memory_order_relaxed);
  g_slots_used.store(0, std::memory_order_relaxed);
  g_ended.store(false, std::memory_order_relaxed);
  g_exit_status.store(kNoStatus, std::memory_order_relaxed);
  g_exit_written.store(false, std::memory_order_relaxed);
}

namespace {

// Priority 101: a destructor's priority runs in reverse, so this one runs
// after the shim's others, and (the shim being initialised before the
// program) after the program's own destructors and atexit handlers, whose
// events belong to threads still alive.
__attribute__((destructor(101))) void end_threads_at_exit() {
  end_running_threads_with_process(g_exit_status.load(std::memory_order_relaxed));
}

// exit() runs its handlers newest first. Registered from the shim's
// constructor, this one comes after the program's own handlers and, in
// glibc, after the libraries' destructors too (ld.so's are registered
// later, as the program starts): the destructor above has then ended the
// threads, and the process's end is written here.
void note_exit_status(int status, void*) {
  // A vfork child that calls exit shares this memory: its status is not
  // the process's.
  if (!shim_attached() || static_cast<uint32_t>(syscall(SYS_getpid)) != shim_pid()) return;
  g_exit_status.store(status, std::memory_order_relaxed);
  if (g_ended.load(std::memory_order_acquire)) write_own_exit(status);
}

}  // namespace

void note_exit_status_at_exit() {
  // A fork child keeps the registration; an exec'd image registers again.
  static std::atomic<bool> registered{false};
  if (!registered.exchange(true)) on_exit(note_exit_status, nullptr);
}

}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

// _exit runs no destructors: the threads end here.
__attribute__((visibility("default"))) void _exit(int status) {
  end_running_threads_with_process(status);
  next_symbol(g_exit, "_exit")(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"))) void _Exit(int status) noexcept {
  end_running_threads_with_process(status);
  next_symbol(g_Exit, "_Exit")(status);
  __builtin_unreachable();
}

}  // extern "C"
