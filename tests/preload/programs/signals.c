/* Uses the signals a profiler might, and checks each behaves as it would
 * untraced:
 *   - its own SIGPROF profiling timer (setitimer) and handler, installed
 *     as glibc's profil() (gcc -pg) installs its own: without SA_SIGINFO,
 *     yet reading the interrupted context from its third argument, which
 *     the kernel passes to every handler, and most of its ticks interrupt
 *     the program's own code, which is what gprof counts;
 *   - a handler for SIGRTMAX-5, the sampler's signal: sigaction reports it
 *     back, and a signal queued to it arrives with its value; a plain
 *     handler there gets the kernel's context too;
 *   - a thread that blocks every signal, uses CPU, then takes whatever is
 *     pending with sigtimedwait: nothing, as untraced.
 * Prints one line per check; exits 0 when all passed. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t profs;
static volatile sig_atomic_t profs_without_frame;
static volatile sig_atomic_t own_value;

/* The kernel's siginfo and context sit in the signal frame, just above the
 * handler's own stack frame: anything else is not what the kernel gave.
 * (Without SA_SIGINFO the kernel passes the siginfo's place but leaves it
 * unfilled; the context is filled for every handler.) */
static int from_signal_frame(int sig, const siginfo_t* info, const void* context) {
  char here;
  const uintptr_t sp = (uintptr_t)&here;
  const uintptr_t i = (uintptr_t)info, c = (uintptr_t)context;
  if (i < sp || i - sp > 65536 || c < sp || c - sp > 65536) return 0;
  const ucontext_t* uc = context;
  return sigismember(&uc->uc_sigmask, sig) == 0;
}

/* Where the ticks land, as gprof's histogram sees them. */
static volatile sig_atomic_t profs_in_program;
extern const char __executable_start[], etext[];
static int in_program(const void* context) {
  const ucontext_t* uc = context;
#if defined(__x86_64__)
  const char* pc = (const char*)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  const char* pc = (const char*)uc->uc_mcontext.pc;
#else
  const char* pc = __executable_start;
#endif
  return pc >= __executable_start && pc < etext;
}

static void on_prof(int sig, siginfo_t* info, void* context) {
  profs++;
  if (!from_signal_frame(sig, info, context)) profs_without_frame++;
  else if (in_program(context)) profs_in_program++;
}

static volatile sig_atomic_t own_plain_calls, own_plain_without_frame;
static volatile sig_atomic_t own_plain_mask_wrong;
static void on_own_plain(int sig, siginfo_t* info, void* context) {
  own_plain_calls++;
  if (!from_signal_frame(sig, info, context)) own_plain_without_frame++;
  /* The mask the kernel sets: the interrupted one plus the signal. */
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  if (sigismember(&now, sig) != 1 || sigismember(&now, SIGUSR2) != 0) own_plain_mask_wrong++;
}

static void on_own(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  own_value = info->si_value.sival_int;
}

static long long thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noipa)) static double burn(long long ns) {
  const long long start = thread_cpu_ns();
  double x = 1;
  do {
    for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
  } while (thread_cpu_ns() - start < ns);
  return x;
}

static void* waiter(void* arg) {
  int* nothing_pending = arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  static volatile double sink;
  sink = burn(100 * 1000000LL);
  const struct timespec zero = {0, 0};
  const int r = sigtimedwait(&all, NULL, &zero);
  *nothing_pending = r < 0 && errno == EAGAIN;
  return NULL;
}

int main(void) {
  int ok = 1;
  struct sigaction prof;
  memset(&prof, 0, sizeof prof);
  prof.sa_handler = (void (*)(int))on_prof; /* as profil() does: no SA_SIGINFO */
  prof.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &prof, NULL);
  struct itimerval every = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &every, NULL);
  /* The kernel checks CPU timers on the scheduler's tick while the process
   * runs: on a busy machine a 200 ms burn can see fewer than 10 checks.
   * Burn on until 10 ticks or 5 s of CPU time; only a timer that never
   * fires in that time is "silent". */
  static volatile double sink;
  for (int round = 0; round < 25 && profs < 10; ++round) sink = burn(200 * 1000000LL);
  struct itimerval off;
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_PROF, &off, NULL);
  printf("sigprof: %s\n", profs >= 10 ? "ticking" : "silent");
  ok &= profs >= 10;
  printf("sigprof handler's siginfo and context: %s\n",
         profs_without_frame == 0 ? "the kernel's" : "not the kernel's");
  ok &= profs_without_frame == 0;
  /* The loop is the program's: most ticks interrupt it there, as gprof
   * needs, not inside a tracer's handler that the same tick started. */
  printf("sigprof ticks: %s\n", profs_in_program * 2 > profs ? "mostly in the program" : "mostly elsewhere");
  ok &= profs_in_program * 2 > profs;

  const int sig = SIGRTMAX - 5;
  struct sigaction own, old;
  memset(&own, 0, sizeof own);
  memset(&old, 0, sizeof old);
  own.sa_sigaction = on_own;
  own.sa_flags = SA_SIGINFO;
  sigaction(sig, &own, NULL);
  sigaction(sig, NULL, &old);
  printf("own handler: %s\n", old.sa_sigaction == on_own ? "reported back" : "not ours");
  ok &= old.sa_sigaction == on_own;
  union sigval value;
  value.sival_int = 42;
  sigqueue(getpid(), sig, value); /* delivered before sigqueue returns */
  printf("own signal: value %d\n", (int)own_value);
  ok &= own_value == 42;
  own.sa_handler = (void (*)(int))on_own_plain;
  own.sa_flags = 0;
  sigaction(sig, &own, NULL);
  raise(sig);
  const int plain_ok = own_plain_calls == 1 && own_plain_without_frame == 0 && own_plain_mask_wrong == 0;
  printf("own signal, plain handler: %s\n", plain_ok ? "called with the kernel's context and mask" : "not called as untraced");
  ok &= plain_ok;

  int nothing_pending = 0;
  pthread_t t;
  pthread_create(&t, NULL, waiter, &nothing_pending);
  pthread_join(t, NULL);
  printf("sigtimedwait on every signal: %s\n", nothing_pending ? "nothing pending" : "got one");
  ok &= nothing_pending;
  return ok ? 0 : 1;
}
