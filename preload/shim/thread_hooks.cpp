// Interposed thread functions. pthread_create starts every new thread in a
// trampoline that describes it and arms its sampling timer before running
// the program's start routine; a pthread key's destructor sees it end,
// however it ends (return, pthread_exit, cancellation). Naming is recorded
// from pthread_setname_np and prctl(PR_SET_NAME).
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "fast_unwind.h"
#include "live_threads.h"
#include "modules.h"
#include "next_symbol.h"
#include "reentry_guard.h"
#include "samples.h"
#include "shim_state.h"
#include "signal_hooks.h"
#include "stack_table.h"
#include "stdio_run.h"
#include "thread_cpu_time.h"
#include "thread_provider.h"

namespace spoor::preload {

constinit Provider g_threads{"Spoor.Thread"};

namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using SetnameFn = int (*)(pthread_t, const char*);
using PrctlFn = int (*)(int, unsigned long, unsigned long, unsigned long, unsigned long);

std::atomic<CreateFn> g_create{nullptr};
std::atomic<SetnameFn> g_setname{nullptr};
std::atomic<PrctlFn> g_prctl{nullptr};


// Set by attach_threads when new threads need the trampoline (Spoor.Thread
// enabled or sampling on); until then, and in a program not being
// recorded, pthread_create is a plain forward.
std::atomic<bool> g_trampoline{false};
std::atomic<bool> g_attached{false};

// Ends every thread that has a value for it (see on_thread_exit).
pthread_key_t g_exit_key;
constinit char g_exit_marker = 0;
constinit thread_local int t_exit_calls __attribute__((tls_model("initial-exec"))) = 0;

// Offset of the kernel tid in glibc's struct pthread (what a pthread_t
// points to), or -1: naming another thread needs its tid.
long g_tid_offset = -1;

struct StartArg {
  void* (*start)(void*);
  void* arg;
  uint32_t parent_tid;
  uint32_t creator_stack;
  bool blocks_sample_signal;  // the creator's mask as the program set it (signal_hooks.h)
};

uint32_t current_tid() { return spoor_port_thread(); }

// glibc publishes the offset for debuggers (libthread_db) as
// _thread_db_pthread_tid = {bits, count, offset}; it is trusted only if it
// finds the calling thread's own tid.
void find_tid_offset() {
  const auto* desc = static_cast<const uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid"));
  if (desc == nullptr || desc[0] != 8 * sizeof(pid_t) || desc[1] != 1) return;
  pid_t tid;
  std::memcpy(&tid, reinterpret_cast<const char*>(pthread_self()) + desc[2], sizeof tid);
  if (static_cast<uint32_t>(tid) == current_tid()) g_tid_offset = desc[2];
}

uint32_t tid_of(pthread_t thread) {
  if (pthread_equal(thread, pthread_self())) return current_tid();
  if (g_tid_offset < 0) return 0;
  pid_t tid;
  std::memcpy(&tid, reinterpret_cast<const char*>(thread) + g_tid_offset, sizeof tid);
  return tid > 0 ? static_cast<uint32_t>(tid) : 0;
}

// The calling thread's name as the kernel has it (inherited from its
// creator until it is set).
void write_current_name(uint32_t tid) {
  char name[17] = {};
  if (next_symbol(g_prctl, "prctl")(PR_GET_NAME, reinterpret_cast<unsigned long>(name), 0, 0, 0) == 0)
    kThreadName.write(tid, Str(name, strnlen(name, 16)));
}

// The first things a thread does, under the reentry guard.
void begin_thread(uint32_t parent_tid, void* (*start)(void*), uint32_t creator_stack) {
  const uint32_t tid = current_tid();
  kThreadStart.write(tid, parent_tid, reinterpret_cast<const void*>(start), own_thread_cpu_ns(), creator_stack);
  note_thread_running(tid);
  if (kThreadName.enabled()) write_current_name(tid);
  pthread_setspecific(g_exit_key, &g_exit_marker);
  start_thread_sampling();
}

void* thread_trampoline(void* raw) {
  const uint64_t began_ns = shim_clock_ns();
  const StartArg a = *static_cast<StartArg*>(raw);
  {
    ReentryGuard guard;
    std::free(raw);  // under the guard: the shim's own block, never in the trace
    begin_thread_sample_mask(a.blocks_sample_signal);
    prime_thread_stack();  // before the program's code: it may hold locks the lookup takes
    begin_thread(a.parent_tid, a.start, a.creator_stack);
    note_shim_started(began_ns);  // its sample timer's set-up is the shim's
  }
  return a.start(a.arg);
}

// The key's destructor. glibc calls key destructors in up to
// PTHREAD_DESTRUCTOR_ITERATIONS rounds, after the thread_local
// destructors; setting the value again asks for the next round, so
// ThreadEnd goes out in the last one, after what the program's own
// destructors did (their frees are the thread's). The sampling timer goes
// in the first round, before libunwind's destructor frees the per-thread
// cache a sample would walk with.
void on_thread_exit(void* marker) {
  if (++t_exit_calls == 1) stop_thread_sampling();
  if (t_exit_calls < PTHREAD_DESTRUCTOR_ITERATIONS) {
    pthread_setspecific(g_exit_key, marker);
    return;
  }
  const uint32_t tid = current_tid();
  end_stdio_runs();  // the thread's pending stdio runs (stdio_run.h)
  if (note_thread_ended(tid)) kThreadEnd.write(own_thread_cpu_ns(), tid, false);
}

}  // namespace

void begin_thread_after_fork() {
  forget_running_threads_after_fork();
  if (g_attached.load(std::memory_order_acquire)) begin_thread(0, nullptr, 0);
}

void attach_threads() {
  find_tid_offset();
  if (pthread_key_create(&g_exit_key, on_thread_exit) != 0) return;
  next_symbol(g_create, "pthread_create");
  next_symbol(g_setname, "pthread_setname_np");
  next_symbol(g_prctl, "prctl");
  const bool sampling = init_samples();
  g_attached.store(true, std::memory_order_release);
  // The trampoline also primes each thread's stack bounds for the fast
  // unwinder: without them (-p heap: no thread events, no samples) every
  // capture of a thread fell back to libunwind, which also maps a 256 KiB
  // cache per thread; 5,000 short threads took 3x as long.
  g_trampoline.store(sampling || kThreadStart.enabled() || kThreadEnd.enabled() || fast_unwinder_in_use(),
                     std::memory_order_release);
  begin_thread(0, nullptr, 0);
}

}  // namespace spoor::preload

using namespace spoor::preload;

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

extern "C" {

SPOOR_INTERPOSE int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                                   void* arg) {
  const CreateFn real = next_symbol(g_create, "pthread_create");
  {
    ReentryGuard guard;  // what loading libdw allocates is the shim's
    prepare_unwinder_for_threads();
  }
  if (!g_trampoline.load(std::memory_order_acquire)) return real(thread, attr, start, arg);
  StartArg* a;
  {
    ReentryGuard guard;
    a = static_cast<StartArg*>(std::malloc(sizeof(StartArg)));  // untraced: the guard is held
    if (a == nullptr) return real(thread, attr, start, arg);  // an undescribed thread, not a failure
    rescan_modules_if_changed();
    // Skip 1: this hook's frame; the stack starts at the program's call.
    *a = StartArg{start, arg, current_tid(), kThreadStart.enabled() ? current_stack_id(1) : 0,
                  program_blocks_sample_signal()};
  }
  // Not under the guard: what pthread_create allocates (the new thread's
  // TLS blocks) is traced as it would be without this hook.
  const int err = real(thread, attr, thread_trampoline, a);
  if (err != 0) {
    ReentryGuard guard;
    std::free(a);
  }
  return err;
}

SPOOR_INTERPOSE int pthread_setname_np(pthread_t thread, const char* name) {
  const int err = next_symbol(g_setname, "pthread_setname_np")(thread, name);
  if (err == 0 && g_attached.load(std::memory_order_acquire)) {
    ReentryGuard guard;
    if (guard.records()) kThreadName.write(tid_of(thread), name);
  }
  return err;
}

// prctl is variadic; glibc's reads four more unsigned longs whatever the
// option, and so does this forward.
SPOOR_INTERPOSE int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  const unsigned long a2 = va_arg(ap, unsigned long);
  const unsigned long a3 = va_arg(ap, unsigned long);
  const unsigned long a4 = va_arg(ap, unsigned long);
  const unsigned long a5 = va_arg(ap, unsigned long);
  va_end(ap);
  const int r = next_symbol(g_prctl, "prctl")(option, a2, a3, a4, a5);
  if (r == 0 && option == PR_SET_NAME && g_attached.load(std::memory_order_acquire)) {
    ReentryGuard guard;
    // The kernel keeps at most 15 bytes of it.
    const char* name = reinterpret_cast<const char*>(a2);
    if (guard.records()) kThreadName.write(current_tid(), spoor::Str(name, strnlen(name, 15)));
  }
  return r;
}

}  // extern "C"
