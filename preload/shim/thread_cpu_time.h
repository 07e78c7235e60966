// A thread's CPU time: for its ThreadStart, Exec and ThreadEnd, what the
// samples of it can be checked against (the CPU-time timer the sampler
// uses by default is checked at the kernel's tick, and a thread that runs
// a few ticks may get no sample at all: bench/RESULTS.md, "The sampling
// clock"); and for the task-clock sampler, the periods each of its samples
// stands for.
#ifndef SPOOR_PRELOAD_THREAD_CPU_TIME_H
#define SPOOR_PRELOAD_THREAD_CPU_TIME_H

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

namespace spoor::preload {

// The CPU time (user and system) thread `tid` of the calling process has
// used, in ns; 0 when it cannot be read (the thread is gone). The clock id
// is the kernel's per-thread CPU clock of that tid, as
// pthread_getcpuclockid makes it ((~tid << 3) | per-thread | sched): the
// kernel lets a process read it for any of its own threads, so the thread
// that ends the process reads the others'. A raw system call: this runs at
// thread and process exit, inside the shim.
inline uint64_t cpu_clock_ns(clockid_t clock) {
  timespec now{};
  if (syscall(SYS_clock_gettime, clock, &now) != 0) return 0;
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}
inline uint64_t thread_cpu_ns(uint32_t tid) {
  constexpr unsigned kPerThread = 4, kSchedClock = 2;
  return cpu_clock_ns(static_cast<clockid_t>((~tid << 3) | kPerThread | kSchedClock));
}

// The calling thread's: the same without naming it by tid (which in
// another pid namespace is not this one's).
inline uint64_t own_thread_cpu_ns() { return cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_THREAD_CPU_TIME_H
