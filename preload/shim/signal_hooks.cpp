// Interposed signal functions: the program keeps the sample signal as its
// own (signal_hooks.h), and every other handler the program installs runs
// through a trampoline that tells the hooks whether it interrupted the
// shim (reentry_guard.h): their calls are then recorded (all but stdio's)
// or counted as lost (stdio's), not dropped unseen.
// sigaction and the like report the program's own handler, never the
// trampoline.
//
// Not covered: a program that installs a handler with the raw
// rt_sigaction system call replaces the sampler's (its handler then also
// receives the sampling signals), and a handler installed so is not
// wrapped: its calls into hooks while the shim was interrupted are not seen.
#include "next_symbol.h"
#include "reentry_guard.h"
#include "shim_state.h"
#include "signal_hooks.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

namespace spoor::preload {
namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SigwaitFn = int (*)(const sigset_t*, int*);
using SigwaitinfoFn = int (*)(const sigset_t*, siginfo_t*);
using SigtimedwaitFn = int (*)(const sigset_t*, siginfo_t*, const struct timespec*);
using SignalfdFn = int (*)(int, const sigset_t*, int);
using SigmaskFn = int (*)(int, const sigset_t*, sigset_t*);

std::atomic<SigactionFn> g_sigaction{nullptr};
std::atomic<SigwaitFn> g_sigwait{nullptr};
std::atomic<SigwaitinfoFn> g_sigwaitinfo{nullptr};
std::atomic<SigtimedwaitFn> g_sigtimedwait{nullptr};
std::atomic<SignalfdFn> g_signalfd{nullptr};
std::atomic<SigmaskFn> g_pthread_sigmask{nullptr};
std::atomic<SigmaskFn> g_sigprocmask{nullptr};

// The shim's own mask changes: the real function, not the hook below (the
// writer must block every signal, the sample signal included).
int real_sigmask(int how, const sigset_t* set, sigset_t* old) {
  return next_symbol(g_pthread_sigmask, "pthread_sigmask")(how, set, old);
}


// The sample signal once the sampler owns it; 0 before (and when sampling
// is off): every hook is then a plain forward.
std::atomic<int> g_owned{0};

// A value signal handlers read, in two copies: the one in use is named by
// the generation's low bit. A writer (under g_writer) fills the other copy,
// then bumps the generation; a reader copies the current one and retries
// if the generation moved meanwhile. A writer interrupted on the reader's
// own thread was filling the copy not in use, so the reader never waits.
template <class T>
class TwoCopies {
 public:
  T read() const {
    T value;
    uint32_t g;
    do {
      g = generation_.load(std::memory_order_acquire);
      value = copy_[g & 1];
      std::atomic_thread_fence(std::memory_order_acquire);
    } while (generation_.load(std::memory_order_relaxed) != g);
    return value;
  }
  void write(const T& value) {
    const uint32_t g = generation_.load(std::memory_order_relaxed);
    copy_[(g + 1) & 1] = value;
    generation_.store(g + 1, std::memory_order_release);
  }

 private:
  std::atomic<uint32_t> generation_{0};
  T copy_[2] = {};
};

// Writers of the program's dispositions (the copies here and the kernel's
// together) hold it with every signal blocked: a handler of the writer's
// own thread that called sigaction would otherwise wait on it forever.
std::mutex g_writer;

// g_writer held, with every signal of the calling thread blocked.
class WriterLock {
 public:
  WriterLock() {
    sigset_t all;
    sigfillset(&all);
    real_sigmask(SIG_SETMASK, &all, &saved_);
    g_writer.lock();
  }
  ~WriterLock() {
    g_writer.unlock();
    real_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  sigset_t saved_;
};

// The program's disposition for the owned signal.
constinit TwoCopies<struct sigaction> g_program;

struct sigaction program_action() { return g_program.read(); }

// sigaction(2) on the program's copy.
void exchange_program_action(const struct sigaction* act, struct sigaction* old) {
  WriterLock lock;
  if (old != nullptr) *old = g_program.read();
  if (act != nullptr) g_program.write(*act);
}

bool owned(int sig) { return sig != 0 && sig == g_owned.load(std::memory_order_relaxed); }

// Blocks or unblocks the sample signal alone in this thread's real mask.
int change_sample_signal(int how) {
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, g_owned.load(std::memory_order_relaxed));
  return real_sigmask(how, &only, nullptr);
}

// The sampler's own action, as installed: re-installed with SA_ONSTACK
// once the program asks for its handlers to run on the signal stack.
struct sigaction g_sampler_action;
std::atomic<bool> g_sampler_on_stack{false};

// Go's runtime installs every signal's handler with SA_ONSTACK, the sample
// signal's too: goroutines run on stacks of a few KiB, too small for a
// handler, the kernel's signal frame and a walk, so each thread has a
// signal stack of 32 KiB for them. A program that wants its handlers
// there gets the sampler's there as well (threads without a signal stack
// are not affected); other programs' small signal stacks (Rust's, for
// stack overflows) are left to the handlers they were made for.
void follow_on_stack(const struct sigaction* act) {
  if (act == nullptr || (act->sa_flags & SA_ONSTACK) == 0 || g_sampler_on_stack.exchange(true)) return;
  struct sigaction mine = g_sampler_action;
  mine.sa_flags |= SA_ONSTACK;
  g_sigaction.load(std::memory_order_relaxed)(g_owned.load(std::memory_order_relaxed), &mine, nullptr);
}

// Set once the program gives the sample signal a disposition of its own:
// it uses the signal, so its masks are its to set (unchanged from then on).
std::atomic<bool> g_program_uses_signal{false};

// The program's view of the sample signal in this thread's mask (the
// kernel's has it unblocked). initial-exec: read in hooks that may run in
// signal handlers.
constinit thread_local bool t_program_blocks __attribute__((tls_model("initial-exec"))) = false;

// pthread_sigmask and sigprocmask with the sample signal left unblocked,
// and `old` as the program's view has it. Cost: a sigismember and a TLS
// access beside the real call; a copy of the set when it names the signal.
int masked_call(SigmaskFn real, int how, const sigset_t* set, sigset_t* old) {
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const int sig = g_owned.load(std::memory_order_relaxed);
  if (sig == 0 || g_program_uses_signal.load(std::memory_order_relaxed)) return real(how, set, old);
  const bool before = t_program_blocks;
  bool after = before;
  sigset_t copy;
  const sigset_t* pass = set;
  if (set != nullptr && sigismember(set, sig) == 1) {
    if (how == SIG_BLOCK || how == SIG_SETMASK) {
      after = true;
      copy = *set;
      sigdelset(&copy, sig);
      pass = &copy;
    } else if (how == SIG_UNBLOCK) {
      after = false;
    }
  } else if (set != nullptr && how == SIG_SETMASK) {
    after = false;
  }
  const int result = real(how, pass, old);
  if (result != 0) return result;  // an unknown `how` among others
  if (set != nullptr) t_program_blocks = after;
  if (old != nullptr) {
    if (before) sigaddset(old, sig);
    else sigdelset(old, sig);
  }
  return result;
}

// The set without the sample signal, so a thread that waits for "every
// signal" is never handed a sampling one.
const sigset_t* without_sample_signal(const sigset_t* set, sigset_t* copy) {
  const int sig = g_owned.load(std::memory_order_relaxed);
  if (set == nullptr || sig == 0 || sigismember(set, sig) != 1) return set;
  *copy = *set;
  sigdelset(copy, sig);
  return copy;
}

// The program's handlers for the signals other than the sample signal, as
// it installed them; the kernel has program_handler_trampoline. Read
// lock-free by the trampoline.
struct ProgramHandler {
  void* function = nullptr;
  bool siginfo = false;  // SA_SIGINFO: called with (sig, info, context)
};
constinit TwoCopies<ProgramHandler> g_handlers[NSIG];

ProgramHandler program_handler(int sig) { return g_handlers[sig].read(); }

// Counts a handler that interrupted the shim in and out. Cost for every
// other delivery: a TLS load, the seqlock read and one indirect call,
// which g++ -O2 makes a tail jump: the program's handler then runs with
// the kernel's signal frame as its caller, so a backtrace it prints is
// the one it prints untraced.
void program_handler_trampoline(int sig, siginfo_t* info, void* context) {
  const ProgramHandler h = program_handler(sig);
  if (h.function == nullptr) return;
  const bool over_shim = t_in_shim;
  if (over_shim) ++t_handlers_over_shim;
  // Every handler gets the kernel's three arguments, SA_SIGINFO or not, as
  // the kernel itself passes them: glibc's profil() (gcc -pg) installs a
  // plain handler and reads the interrupted PC from the third.
  reinterpret_cast<void (*)(int, siginfo_t*, void*)>(h.function)(sig, info, context);
  if (over_shim) --t_handlers_over_shim;
}

bool is_handler(const struct sigaction& a) { return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN; }

// An action the kernel reported: the program's handler where it has the
// trampoline.
void name_program_handler(struct sigaction& a, const ProgramHandler& h) {
  if ((a.sa_flags & SA_SIGINFO) == 0 || a.sa_sigaction != program_handler_trampoline) return;
  if (h.siginfo) {
    a.sa_sigaction = reinterpret_cast<void (*)(int, siginfo_t*, void*)>(h.function);
  } else {
    a.sa_flags &= ~SA_SIGINFO;
    a.sa_handler = reinterpret_cast<void (*)(int)>(h.function);
  }
}

// sigaction(2) for a signal other than the sample signal: a handler goes in
// wrapped, and `old` names the program's handler where the kernel has the
// trampoline.
int wrapped_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  const SigactionFn real = next_symbol(g_sigaction, "sigaction");
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (sig <= 0 || sig >= NSIG) return real(sig, act, old);
  // A query, SIG_DFL or SIG_IGN leaves the table as it is: the real call
  // and a lock-free read of the table. A vfork child shares the table with
  // its parent but not the parent's handlers: what it installs goes in
  // unwrapped, the table stays the parent's. (A handler's install costs
  // ~0.7 us more than untraced: getpid, the mask twice and the lock;
  // bench/RESULTS.md.)
  if (act == nullptr || !is_handler(*act) ||
      (shim_attached() && static_cast<uint32_t>(getpid()) != shim_pid())) {
    const int result = real(sig, act, old);
    if (result == 0 && old != nullptr) name_program_handler(*old, program_handler(sig));
    return result;
  }
  // A handler: the table and the kernel change together.
  int result;
  int error;
  {
    WriterLock lock;
    const ProgramHandler before = program_handler(sig);
    const bool siginfo = (act->sa_flags & SA_SIGINFO) != 0;
    g_handlers[sig].write({siginfo ? reinterpret_cast<void*>(act->sa_sigaction)
                                   : reinterpret_cast<void*>(act->sa_handler),
                           siginfo});
    struct sigaction mine = *act;
    mine.sa_sigaction = program_handler_trampoline;
    mine.sa_flags |= SA_SIGINFO;
    result = real(sig, &mine, old);
    error = errno;
    if (result != 0) g_handlers[sig].write(before);
    if (result == 0 && old != nullptr) name_program_handler(*old, before);
  }
  errno = error;
  return result;
}

// A fork while another thread holds g_writer would leave the child's copy
// of it locked for good, and the child's first sigaction (resetting its
// handlers before an exec, say) waiting forever: the forking thread takes
// it around the fork, with every signal blocked as its other holders do.
constinit thread_local sigset_t t_mask_before_fork __attribute__((tls_model("initial-exec"))) = {};
//
// The sample signal alone is let through again once the lock is held, when
// the program has no handler of its own on it (such a handler could call
// sigaction, and wait on g_writer) and had not blocked it: a sample that
// falls due while the kernel copies the process is then taken as the fork
// returns, in the fork, as it would be untraced. Held back, it was taken
// only at the unblock in unlock_after_fork, and a program that forks a
// large heap had most of its CPU charged to pthread_sigmask. The sampler's
// handler takes no lock a fork holds (samples.cpp), and a fork child has no
// timer (and no pending signal) until its own is made.
void lock_for_fork() {
  sigset_t all;
  sigfillset(&all);
  real_sigmask(SIG_SETMASK, &all, &t_mask_before_fork);
  g_writer.lock();
  const int sig = g_owned.load(std::memory_order_relaxed);
  if (sig != 0 && !sigismember(&t_mask_before_fork, sig)) {
    const struct sigaction program = g_program.read();
    if (!(program.sa_flags & SA_SIGINFO) && (program.sa_handler == SIG_DFL || program.sa_handler == SIG_IGN))
      change_sample_signal(SIG_UNBLOCK);
  }
}
void unlock_after_fork() {
  g_writer.unlock();
  real_sigmask(SIG_SETMASK, &t_mask_before_fork, nullptr);
}

}  // namespace

void register_signal_fork_handlers() {
  next_symbol(g_pthread_sigmask, "pthread_sigmask");  // not looked up inside a fork
  pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

bool take_sample_signal(int sig, const struct sigaction& action) {
  // Resolved now: dlsym is not async-signal-safe.
  const SigactionFn real = next_symbol(g_sigaction, "sigaction");
  next_symbol(g_sigwait, "sigwait");
  next_symbol(g_sigwaitinfo, "sigwaitinfo");
  next_symbol(g_sigtimedwait, "sigtimedwait");
  next_symbol(g_signalfd, "signalfd");
  next_symbol(g_pthread_sigmask, "pthread_sigmask");
  next_symbol(g_sigprocmask, "sigprocmask");
  if (real == nullptr) return false;
  struct sigaction before{};
  if (real(sig, &action, &before) != 0) return false;
  {
    WriterLock lock;
    g_program.write(before);
  }
  g_sampler_action = action;
  g_owned.store(sig, std::memory_order_release);
  return true;
}

bool program_blocks_sample_signal() { return t_program_blocks; }

bool block_sample_signal_for_exec() {
  const int sig = g_owned.load(std::memory_order_relaxed);
  if (sig == 0 || !t_program_blocks || g_program_uses_signal.load(std::memory_order_relaxed)) return false;
  return change_sample_signal(SIG_BLOCK) == 0;
}

void unblock_sample_signal_after_exec_failed(bool blocked) {
  if (blocked) change_sample_signal(SIG_UNBLOCK);
}

void adopt_initial_sample_mask() {
  const int sig = g_owned.load(std::memory_order_relaxed);
  sigset_t now;
  if (sig == 0 || real_sigmask(SIG_SETMASK, nullptr, &now) != 0) return;
  begin_thread_sample_mask(sigismember(&now, sig) == 1);
}

void begin_thread_sample_mask(bool program_blocks) {
  t_program_blocks = program_blocks;
  const int sig = g_owned.load(std::memory_order_relaxed);
  if (sig == 0 || g_program_uses_signal.load(std::memory_order_relaxed)) return;
  change_sample_signal(SIG_UNBLOCK);
}

void run_program_handler(int sig, siginfo_t* info, void* context) {
  struct sigaction a = program_action();
  if (a.sa_handler == SIG_IGN) return;
  if (a.sa_handler == SIG_DFL) {
    // A real-time signal's default action ends the process: give the
    // kernel back its default, send the signal again to this thread and
    // unblock it, so it is delivered (and kills) right here.
    struct sigaction dfl{};
    dfl.sa_handler = SIG_DFL;
    g_sigaction.load(std::memory_order_relaxed)(sig, &dfl, nullptr);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
    change_sample_signal(SIG_UNBLOCK);  // sig is the sample signal: the only one handled here
    return;
  }
  if (a.sa_flags & SA_RESETHAND) {
    struct sigaction dfl{};
    dfl.sa_handler = SIG_DFL;
    exchange_program_action(&dfl, nullptr);
  }
  // The mask the kernel would have set: the interrupted one (the
  // context's; the sampler's action blocks more), plus the handler's
  // sa_mask, plus the signal itself unless SA_NODEFER.
  sigset_t saved, during;
  real_sigmask(SIG_SETMASK, nullptr, &saved);
  sigorset(&during, &static_cast<ucontext_t*>(context)->uc_sigmask, &a.sa_mask);
  if (a.sa_flags & SA_NODEFER) sigdelset(&during, sig);
  else sigaddset(&during, sig);
  real_sigmask(SIG_SETMASK, &during, nullptr);
  const bool over_shim = t_in_shim;
  if (over_shim) ++t_handlers_over_shim;
  // Three arguments for every handler, as in program_handler_trampoline
  // (sa_handler and sa_sigaction share their place).
  a.sa_sigaction(sig, info, context);
  if (over_shim) --t_handlers_over_shim;
  real_sigmask(SIG_SETMASK, &saved, nullptr);
}

}  // namespace spoor::preload

using namespace spoor::preload;

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

extern "C" {

SPOOR_INTERPOSE int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (!owned(sig)) return wrapped_sigaction(sig, act, old);
  if (act != nullptr) g_program_uses_signal.store(true, std::memory_order_relaxed);
  follow_on_stack(act);
  exchange_program_action(act, old);
  return 0;
}

// glibc's other ways to set a handler, each as glibc defines it on top of
// sigaction (so they go through the hook above): signal, bsd_signal and
// ssignal with BSD semantics (restarting, the signal blocked while its
// handler runs), sysv_signal (what signal() is under strict X/Open) with
// System V's (reset to SIG_DFL on delivery, not blocked, not restarting).
static sighandler_t install_handler(int sig, sighandler_t handler, int flags, bool block_itself) {
  if (handler == SIG_ERR) {
    errno = EINVAL;
    return SIG_ERR;
  }
  struct sigaction act{}, old{};
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  if (block_itself && sig > 0 && sig < NSIG) sigaddset(&act.sa_mask, sig);
  act.sa_flags = flags;
  return sigaction(sig, &act, &old) == 0 ? old.sa_handler : SIG_ERR;
}

SPOOR_INTERPOSE sighandler_t signal(int sig, sighandler_t handler) {
  return install_handler(sig, handler, SA_RESTART, true);
}
SPOOR_INTERPOSE sighandler_t bsd_signal(int sig, sighandler_t handler) {
  return install_handler(sig, handler, SA_RESTART, true);
}
SPOOR_INTERPOSE sighandler_t ssignal(int sig, sighandler_t handler) {
  return install_handler(sig, handler, SA_RESTART, true);
}
SPOOR_INTERPOSE sighandler_t sysv_signal(int sig, sighandler_t handler) {
  return install_handler(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}
SPOOR_INTERPOSE sighandler_t __sysv_signal(int sig, sighandler_t handler) {
  return install_handler(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}
SPOOR_INTERPOSE int __sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return sigaction(sig, act, old);
}

// sigset (System V): SIG_HOLD blocks the signal; any other disposition is
// installed (no flags, empty mask) and unblocks it. Returns SIG_HOLD when
// the signal was blocked before, else the previous disposition.
SPOOR_INTERPOSE sighandler_t sigset(int sig, sighandler_t disposition) {
  if (disposition == SIG_ERR || sig <= 0 || sig >= NSIG) {
    errno = EINVAL;
    return SIG_ERR;
  }
  sigset_t only, before;
  sigemptyset(&only);
  sigaddset(&only, sig);
  struct sigaction old{};
  if (disposition == SIG_HOLD) {
    if (sigprocmask(SIG_BLOCK, &only, &before) != 0) return SIG_ERR;
    if (sigismember(&before, sig) == 1) return SIG_HOLD;
    if (sigaction(sig, nullptr, &old) != 0) return SIG_ERR;
    return old.sa_handler;
  }
  struct sigaction act{};
  act.sa_handler = disposition;
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  if (sigprocmask(SIG_UNBLOCK, &only, &before) != 0) return SIG_ERR;
  return sigismember(&before, sig) == 1 ? SIG_HOLD : old.sa_handler;
}

SPOOR_INTERPOSE int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  // pthread_sigmask returns the error number; sigprocmask sets errno.
  const int result = masked_call(next_symbol(g_pthread_sigmask, "pthread_sigmask"), how, set, old);
  return result == -1 ? errno : result;
}

SPOOR_INTERPOSE int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  return masked_call(next_symbol(g_sigprocmask, "sigprocmask"), how, set, old);
}

SPOOR_INTERPOSE int sigwait(const sigset_t* set, int* sig) {
  sigset_t copy;
  return next_symbol(g_sigwait, "sigwait")(without_sample_signal(set, &copy), sig);
}

SPOOR_INTERPOSE int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  sigset_t copy;
  return next_symbol(g_sigwaitinfo, "sigwaitinfo")(without_sample_signal(set, &copy), info);
}

SPOOR_INTERPOSE int sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  sigset_t copy;
  return next_symbol(g_sigtimedwait, "sigtimedwait")(without_sample_signal(set, &copy), info, timeout);
}

SPOOR_INTERPOSE int signalfd(int fd, const sigset_t* mask, int flags) {
  sigset_t copy;
  return next_symbol(g_signalfd, "signalfd")(fd, without_sample_signal(mask, &copy), flags);
}

}  // extern "C"
