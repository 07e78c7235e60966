// A thread's CPU-time sampling clock from perf_event_open: a task-clock
// software event of the thread, counting its CPU time (user and kernel)
// on a high-resolution timer, that raises the sample signal at the thread
// itself when a period has passed.
//
// Why not only the POSIX CPU timer (samples.cpp's other clock): the kernel
// checks CPU timers on its scheduler tick, 250 Hz on Debian's kernels, so
// a 1 kHz timer interrupts a busy thread every fourth period and brings the
// three it missed as an overrun: a quarter of the stacks asked for. The
// task clock interrupts at the period itself (1,000 samples per second of
// CPU at 1 kHz, measured in bench/RESULTS.md).
//
// Chosen with `spoor record --sample-clock task`, for each thread from its
// start (samples.cpp). Not the default: the kernel switches a thread's
// task clock out and in with the thread, and on this machine's VM that
// made each context switch ~10 us dearer (a pipe ping-pong between two
// threads, bench/RESULTS.md); opening it costs a thread's start ~60 us.
//
// What it costs the program, and where it is not used:
// - one descriptor per sampled thread, close-on-exec, moved to the top of
//   the program's range (high_descriptors.h), for at most kMaxPerfThreads
//   threads at once; further threads, a soft RLIMIT_NOFILE under 256, or
//   a kernel that refuses the event (perf_event_paranoid above 1 for a
//   user without CAP_PERFMON, a seccomp filter, no perf events) get the
//   timer. Kernel time must be counted too, or a thread in system calls
//   would go unsampled: a kernel that allows only user time gets the timer.
// - the event is armed for one period at a time (PERF_EVENT_IOC_REFRESH)
//   and re-armed by the handler, one ioctl per sample: a thread that keeps
//   the signal blocked stops its clock instead of queueing a real-time
//   signal per period, which would end in SIGIO once the queue is full.
//   The periods a sample stands for come from the thread's CPU clock, so
//   time with the signal blocked is still counted, as the timer's overrun
//   counts it.
// Raw system calls throughout (fcntl and close are hooked): these run in
// hooks, in the signal handler and in fork children.
#ifndef SPOOR_PRELOAD_PERF_SAMPLER_H
#define SPOOR_PRELOAD_PERF_SAMPLER_H

#include <signal.h>

#include <cstdint>

namespace spoor::preload {

inline constexpr int kMaxPerfThreads = 32;

// Starts the calling thread's task-clock sampler raising `signal` every
// `period_ns` of its CPU time. False when it cannot (see above): the
// caller then uses the timer. Raw system calls only (it runs in hooks and
// fork children). A thread whose event could not be set up is not tried
// again; one that found every slot taken is, at its next call.
bool start_perf_sampling(long period_ns, int signal);

// Whether the calling thread samples on the task clock now.
bool perf_sampling_active();

// Whether `fd` is some thread's sampling event.
bool perf_sampler_owns(int fd);

// Whether `info` is a signal this thread's task clock raised (now, or
// before stop_perf_sampling: such a signal may still be pending).
bool is_perf_sample_signal(const siginfo_t* info);

// In the handler of a task-clock signal: the periods since the previous
// sample (at least 1), and the clock armed again for the next.
uint32_t perf_sample_periods(long period_ns);

// Closes the calling thread's event, when the descriptor is still the
// event's (a program may have closed it and reused the number).
void stop_perf_sampling();

// In a fork child: the parent's threads' events are not the child's, and
// their descriptors, copied by fork, are closed.
void forget_perf_samplers_in_child();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_PERF_SAMPLER_H
