// The CPU sampler: one CPU-time timer per thread, raw timer syscalls (no
// allocation in any glibc, callable anywhere), and the signal handler.
//
// What the handler may touch (it interrupts arbitrary code):
// - the ring: a reservation is one CAS on the CPU's head, so a sample
//   nested in an interrupted event write takes the next record, and the
//   drainer waits for the outer record's commit as for any other writer;
// - the stack table: lock-free (a slot the interrupted code claimed but has
//   not published makes the sample write its stack again, never wait);
// - libunwind: with the fast unwinder its cursor (fast_unwind.h), else
//   unw_backtrace with its per-thread caches: signal-safe as long as the
//   interrupted code is not itself inside libunwind on this thread, nor
//   taking or letting go of the loader's lock, which libunwind's module
//   listing takes (loader_lock.h: then no libunwind). The shim unwinds
//   only under its reentry guard, and a sample landing under the guard is
//   deferred (reentry_guard.h), so the handler never walks over a
//   half-updated cache of the shim's own; except in a hook's call of the
//   real function (RealCall), where the shim does not unwind, and the time
//   is the program's;
// - not the module scan (after a dlopen): it takes the loader's lock
//   (take_sample says why that hangs); the thread's next hook scans.
// It saves and restores errno, and is installed with SA_RESTART, so an
// interrupted system call resumes instead of failing with EINTR.
#include "samples.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "fast_unwind.h"
#include "loader_lock.h"
#include "modules.h"
#include "perf_sampler.h"
#include "recorder_link.h"
#include "reentry_guard.h"
#include "shim_state.h"
#include "signal_hooks.h"
#include "stack_table.h"
#include "tracer.h"

namespace spoor::preload {

constinit Provider g_samples{"Spoor.Samples"};
constinit thread_local uint32_t t_deferred_sample_periods __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local bool t_in_real_call __attribute__((tls_model("initial-exec"))) = false;

namespace {

constexpr long kDefaultHz = 1000;
constexpr long kMaxHz = 1000000;
// Frames the walk from the handler may spend before reaching the
// interrupted one: this file's, the handler's, the kernel's signal frame.
constexpr int kHandlerFrames = 16;
constexpr int kMaxFrames = 128 + kHandlerFrames;

// The sampling timers' signals carry this address as their value: that is
// how the handler tells them from the program's own uses of the signal.
constinit char g_timer_cookie = 0;
long g_period_ns = 0;  // 0: sampling off
int g_signal = 0;
// SPOOR_SAMPLE_CLOCK=task: each thread samples on its task clock where the
// kernel allows it (perf_sampler.h), from its start (~60 us to open). Not
// moved to at a thread's first timer sample: on this machine's VM a 1 ms
// CPU-time timer often did not fire at all in a thread's first 20 ms of
// CPU time, so short threads never moved. Not the default: every context
// switch of a thread with a task clock costs the kernel more (a pipe
// ping-pong between two threads ran ~2.2x as long, bench/RESULTS.md).
bool g_task_clock = false;

// Whether a thread's first walk may be its first sample's, in the signal
// handler (see start_thread_sampling). Set once, at attach.
bool g_first_walk_in_handler = false;

// The calling thread's kernel timer ID; -1 when it has none.
constinit thread_local int t_timer __attribute__((tls_model("initial-exec"))) = -1;

void* interrupted_pc(const ucontext_t* uc) {
#if defined(__x86_64__)
  return reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return reinterpret_cast<void*>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return nullptr;
#endif
}

// Walks from here through the signal frame: unw_backtrace lists this
// function, the handler, the kernel's sigreturn trampoline and then the
// interrupted instruction's exact address (the unwinder reads it from the
// signal frame and does not back it up as it does return addresses). The
// frames before it are the shim's and are dropped; finding the address
// rather than skipping a fixed count keeps that right whatever the
// compiler inlined.
//
// Cost per sample, measured on the 2-core KVM guest of bench/RESULTS.md
// (release build; rdtsc around the handler, 250 samples per run of a
// program spinning under N frames, 3 runs each): median 0.5-0.6 us at 6
// frames, 0.65-1.3 us at 16, ~1.0 us at 36 and at the 64-frame cap; p99
// 15-20 us (the first samples: cold caches, new Stack events). The kernel's
// delivery and sigreturn add ~2.3 us (a tgkill-to-self loop with an empty
// handler: 2.48 us against 0.17 us for a bare system call). At the 250 Hz
// tick that is under 0.1% of a busy thread's CPU time.
//
// With the fast unwinder (x86-64), the walk starts from the signal's
// context instead (fast_backtrace_from_signal): the rules cached by the
// thread's other captures and its earlier samples take it from the
// interrupted instruction (libunwind steps out of that frame where its
// rule is not cached), through code libunwind cannot cross (CPython's perf
// trampolines) and without its checked loads in JIT code (three system
// calls each).
//
// No module rescan here (rescan_modules_if_changed): it lists the modules
// with dl_iterate_phdr, which takes the loader's lock, and the signal may
// have come while this thread was taking or letting go of that lock
// (inside dlopen, between the lock's word and its owner): the handler then
// waited for itself forever. A module a dlopen just mapped is described by
// the thread's next hook; a sample into it before that is placed by the
// symbolizer all the same (a module is looked up at any time when none
// was loaded at the sample's).
__attribute__((noinline)) void take_sample(const ucontext_t* uc, uint32_t periods) {
  void* frames[kMaxFrames];
  if (fast_unwinder_in_use()) {
    const int depth = stack_depth();
    bool missed = false;
    const int n = fast_backtrace_from_signal(uc, frames, depth < kMaxFrames ? depth : kMaxFrames, &missed);
    // The rules it missed are built at the thread's next way out of the
    // shim (take_deferred_samples), where libdw may allocate.
    if (missed) __atomic_fetch_or(&t_deferred_sample_periods, kRulesToBuild, __ATOMIC_RELAXED);
    // Never unw_backtrace here: its cache for this thread may not exist
    // (init_samples).
    kSample.write(n > 0 ? stack_id_of(frames, n) : 0, periods);
    return;
  }
  void* pc = interrupted_pc(uc);
  // unw_backtrace may list the modules, taking the loader's lock: not
  // while it is half taken (loader_lock.h).
  if (loader_lock_half_taken()) {
    kSample.write(pc != nullptr ? stack_id_of(&pc, 1) : 0, periods);
    return;
  }
  const int want = stack_depth() + kHandlerFrames;
  const int n = unw_backtrace(frames, want < kMaxFrames ? want : kMaxFrames);
  int first = 0;
  while (first < n && first < kHandlerFrames && frames[first] != pc) ++first;
  uint32_t stack;
  if (first < n && first < kHandlerFrames) stack = stack_id_of(frames + first, n - first);
  else if (pc != nullptr) stack = stack_id_of(&pc, 1);  // the walk did not cross the signal frame
  else stack = 0;
  kSample.write(stack, periods);
}

void on_sample_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const bool task_clock = is_perf_sample_signal(info);
  if (!is_sample_signal(info)) {
    run_program_handler(sig, info, context);
  } else if (task_clock ? perf_sampling_active() : t_timer >= 0) {  // else: from a clock this thread stopped
    // The timer: 1 + the periods that expired while this signal was
    // pending (the kernel queues one signal per timer and counts the
    // rest). The task clock: the thread's CPU time since the last sample,
    // and the clock armed again.
    const uint32_t periods = task_clock ? perf_sample_periods(g_period_ns)
                                        : 1 + (info->si_overrun > 0 ? static_cast<uint32_t>(info->si_overrun) : 0);
    if (t_in_shim && !t_in_real_call) {
      // Inside the shim: its unwinder state may be mid-update. The guard
      // takes the sample when it lets go (an xadd: atomic against a nested
      // signal on this thread).
      __atomic_fetch_add(&t_deferred_sample_periods, periods, __ATOMIC_RELAXED);  // below kRulesToBuild
    } else if (t_in_shim) {
      // In the real function under an outermost hook's guard (RealCall):
      // the shim's state is whole, and the time is the program's. Taken
      // now, with a signal nested in this one deferred to that guard.
      t_in_real_call = false;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      take_sample(static_cast<const ucontext_t*>(context), periods);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      t_in_real_call = true;
    } else {
      // The flag by hand, not a ReentryGuard: the guard's destructor takes
      // the samples deferred meanwhile (a nested signal during this one)
      // with the fast unwinder, which may build a rule with libdw, which
      // allocates; and this signal may have interrupted glibc's malloc
      // outside the shim (libc's internal calls, or the real malloc under
      // a hook). Those samples wait for the next guard of the thread's own.
      t_in_shim = true;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      take_sample(static_cast<const ucontext_t*>(context), periods);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      t_in_shim = false;
    }
  }
  errno = saved_errno;
}

}  // namespace

// A forked child has none of its parent's timers; its copy of the thread's
// timer ID must not delete a timer the child creates for itself.
void forget_timer_in_child() {
  t_timer = -1;
  forget_perf_samplers_in_child();
  t_deferred_sample_periods = 0;
}

// Called from ~ReentryGuard with the flag just cleared. Sets it again by
// hand rather than with a guard, whose destructor would call back here.
// Samples that land meanwhile stay for the next guard to take.
__attribute__((noinline)) void take_deferred_samples() {
  t_in_shim = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const uint32_t deferred = __atomic_exchange_n(&t_deferred_sample_periods, 0, __ATOMIC_RELAXED);
  const uint32_t periods = deferred & ~kRulesToBuild;
  // Skip this function: the stack starts in the hook the guard was in.
  if (periods != 0) kSample.write(current_stack_id(1), periods);
  if ((deferred & kRulesToBuild) != 0) build_missed_rules();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_in_shim = false;
}

bool init_samples() {
  const char* text = tracing_setting("SPOOR_SAMPLE_HZ=");
  long hz = text != nullptr && *text != '\0' ? std::strtol(text, nullptr, 10) : kDefaultHz;
  if (hz <= 0 || !kSample.enabled()) return false;
  if (hz > kMaxHz) hz = kMaxHz;
  char tracer_name[32];
  if (const uint32_t tracer = ptrace_tracer(tracer_name, sizeof tracer_name); tracer != 0) {
    kSamplerOff.write(tracer, Str{tracer_name});
    // attach scanned the modules before: the path is known.
    note_samples_off(shim_connection(), executable_path(), tracer_name[0] != '\0' ? tracer_name : "a tracer");
    return false;
  }
  g_signal = SIGRTMAX - kSampleSignalBelowMax;
  struct sigaction action{};
  action.sa_sigaction = on_sample_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  // Every signal but the faults waits for the handler to return. The
  // kernel checks CPU timers at its tick, so a program's own process-wide
  // profiling timer (ITIMER_PROF: gcc -pg's profil()) expires on the same
  // tick as the thread's sampler, and the kernel delivers the thread's own
  // signal first: unblocked, SIGPROF then interrupted the handler at its
  // first instruction, and gprof counted every tick in the shim.
  sigfillset(&action.sa_mask);
  for (int fault : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS}) sigdelset(&action.sa_mask, fault);
  find_loader_lock();  // before the first sample: the handler asks it
  if (!take_sample_signal(g_signal, action)) return false;
  adopt_initial_sample_mask();
  // Where the handler walks with unw_backtrace (no fast unwinder): its
  // first walk in a thread maps that thread's trace cache (256 KiB, mmap:
  // async-signal-safe) and registers it under a pthread key, created by
  // the process's first walk: this one. pthread_setspecific allocates
  // (malloc: not async-signal-safe) only for keys past glibc's first block
  // of 32; a key made after it says where libunwind's is. The fast
  // unwinder's handler walks with libunwind's cursor, which needs neither:
  // no walk here, where the cache's 64 fresh pages cost ~1 ms of every
  // traced process's start (bench/RESULTS.md, "A traced process's start").
  if (!fast_unwinder_in_use()) {
    void* first_walk[2];
    unw_backtrace(first_walk, 2);
    pthread_key_t probe;
    if (pthread_key_create(&probe, nullptr) == 0) {
      g_first_walk_in_handler = probe < 32;
      pthread_key_delete(probe);
    }
  }
  pthread_atfork(nullptr, nullptr, forget_timer_in_child);
  const char* clock = tracing_setting("SPOOR_SAMPLE_CLOCK=");
  g_task_clock = clock != nullptr && std::strcmp(clock, "task") == 0;
  g_period_ns = 1000000000L / hz;
  kSamplerStart.write(static_cast<uint32_t>(hz));
  return true;
}

bool sampling_on() { return g_period_ns != 0; }

int sample_signal() { return g_signal; }

bool is_sample_signal(const siginfo_t* info) {
  return (info != nullptr && info->si_code == SI_TIMER && info->si_value.sival_ptr == &g_timer_cookie) ||
         is_perf_sample_signal(info);
}

void start_thread_sampling() {
  if (g_period_ns == 0 || t_timer >= 0 || perf_sampling_active()) return;
  // Without the fast unwinder, libunwind sets up its per-thread caches on
  // a thread's first unw_backtrace. In the handler when that is safe
  // (init_samples): a thread that never runs long enough to be sampled
  // (most of a server's) never maps them; else here, outside the handler.
  if (!g_first_walk_in_handler && !fast_unwinder_in_use()) {
    void* prime[2];
    unw_backtrace(prime, 2);
  }
  if (g_task_clock && start_perf_sampling(g_period_ns, g_signal)) return;
  struct sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = g_signal;
  event.sigev_value.sival_ptr = &g_timer_cookie;
  event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  int id = -1;
  if (syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &event, &id) != 0) return;
  t_timer = id;  // before arming: the first signal must find it
  struct itimerspec every{};
  every.it_interval.tv_sec = g_period_ns / 1000000000L;
  every.it_interval.tv_nsec = g_period_ns % 1000000000L;
  every.it_value = every.it_interval;
  if (syscall(SYS_timer_settime, id, 0, &every, nullptr) != 0) {
    syscall(SYS_timer_delete, id);
    t_timer = -1;
  }
}

void stop_thread_sampling() {
  stop_perf_sampling();
  const int id = t_timer;
  if (id < 0) return;
  syscall(SYS_timer_delete, id);
  // Cleared after the delete: a signal that was pending is delivered as
  // the syscall returns and is still taken.
  t_timer = -1;
}

}  // namespace spoor::preload
