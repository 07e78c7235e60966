// CPU samples of the traced program: every thread has a clock on its own
// CPU time that interrupts it with a signal every period of CPU time it
// uses (default 1 ms: SPOOR_SAMPLE_HZ=1000, 0 turns sampling off): its
// task clock from perf_event_open where the kernel allows it
// (perf_sampler.h), else a POSIX CPU-time timer. The
// handler writes a Sample on the interrupted thread (the record's tid is the
// thread's) with the ID of the interrupted stack, starting at the
// interrupted instruction.
//
// The signal is SIGRTMAX-5 (kSampleSignalBelowMax): real-time, so no
// program or library that uses the classic profiling signals (SIGPROF,
// setitimer) shares it, and away from both ends of the real-time range,
// where programs that want "a real-time signal" take SIGRTMIN+n or
// SIGRTMAX-n for small n. A program that uses it anyway keeps working:
// signal_hooks.cpp gives it its own disposition and passes it every signal
// that did not come from a sampling timer.
//
// Resolution: the kernel checks CPU-time timers on its scheduler tick
// (CONFIG_HZ, 250 Hz on Debian), so a 1 kHz timer interrupts at most once
// per tick and the periods missed in between arrive as the signal's overrun
// count; the task clock interrupts at each period. Each Sample says how
// many periods it stands for.
#ifndef SPOOR_PRELOAD_SAMPLES_H
#define SPOOR_PRELOAD_SAMPLES_H

#include <signal.h>

#include <cstdint>

#include "spoor/event.h"

namespace spoor::preload {

inline constexpr uint64_t kKeywordSamples = 0x8;
inline constexpr int kSampleSignalBelowMax = 5;

SPOOR_DECLARE_PROVIDER(g_samples);

// stack: the interrupted stack (a Stack event of Spoor.Stack), innermost
// frame the interrupted instruction itself (not a return address).
// periods: sampling periods of CPU time this sample stands for (1 plus the
// timer's overrun: see Resolution above).
SPOOR_EVENT(kSample, g_samples,
            (EventInfo{.name = "Sample", .id = 1, .level = Level::info, .keywords = kKeywordSamples}),
            Field<uint32_t>{"stack"}, Field<uint32_t>{"periods"});

// Sampling is on in this image, at `hz` periods per second of a thread's
// CPU time (SPOOR_SAMPLE_HZ as the sampler took it: capped, defaulted): a
// period is 1e9 / hz ns. Written once per image, before its first Sample.
SPOOR_EVENT(kSamplerStart, g_samples,
            (EventInfo{.name = "SamplerStart", .id = 2, .level = Level::info, .keywords = kKeywordSamples}),
            Field<uint32_t>{"hz"});

// Sampling is off in this image: a debugger or tracer (ptrace) held it from
// its start (tracer.h), and would stop at or print each sample's signal.
// tracer: its pid as this process sees it; tracer_name: its command name.
// Written once per image, in place of SamplerStart.
SPOOR_EVENT(kSamplerOff, g_samples,
            (EventInfo{.name = "SamplerOff", .id = 3, .level = Level::info, .keywords = kKeywordSamples}),
            Field<uint32_t>{"tracer"}, Field<Str>{"tracer_name"});

// Installs the signal handler and remembers the period, from
// SPOOR_SAMPLE_HZ (default 1000). Called once at attach, after the
// providers' enable state is set. Returns false when sampling stays off
// (0 Hz, Spoor.Samples not enabled, a tracer holds the process, or the
// handler cannot be installed).
bool init_samples();

// Whether init_samples turned sampling on.
bool sampling_on();

// The signal the sampling timers raise (SIGRTMAX - kSampleSignalBelowMax).
int sample_signal();

// Starts the calling thread's task clock or CPU-time timer, after priming the
// unwinder's per-thread state outside signal context. Call on the thread
// itself, with the reentry guard held. No-op when sampling is off.
void start_thread_sampling();

// Stops the calling thread's clock. A sample already pending is taken
// before this returns (or never, when the thread blocks the signal).
void stop_thread_sampling();

// Whether a signal is one a sampling clock sent (and not the program's).
bool is_sample_signal(const siginfo_t* info);

// In a fork child (a pthread_atfork handler; begin_cloned_process calls it
// for a clone child): the parent's clocks are not the child's.
void forget_timer_in_child();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SAMPLES_H
