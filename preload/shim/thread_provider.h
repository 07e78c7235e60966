// The threads of the traced program (Spoor.Thread): when each starts and
// ends, who created it from where, and its names. Threads are keyed by the
// kernel's thread ID, which is reused: a ThreadStart after a ThreadEnd with
// the same tid is a new thread.
#ifndef SPOOR_PRELOAD_THREAD_PROVIDER_H
#define SPOOR_PRELOAD_THREAD_PROVIDER_H

#include <cstdint>

#include "spoor/event.h"

namespace spoor::preload {

inline constexpr uint64_t kKeywordThreads = 0x4;
// ThreadStart and ThreadEnd share a task, so readers pair them (on the
// thread, as both are written by the thread itself) as ETW's do.
inline constexpr uint16_t kTaskThread = 1;

SPOOR_DECLARE_PROVIDER(g_threads);

// Written by the new thread itself, before its start routine runs.
// parent_tid: the creating thread (0 for the main thread, which the shim
// finds already running). start: the start routine's address (null for the
// main thread). stack: where pthread_create was called (a Stack event of
// Spoor.Stack; 0 for the main thread). cpu_ns: the thread's own CPU clock
// as the shim began watching it (thread_cpu_time.h), so that ThreadEnd's
// less this is what the thread used while traced. Near 0 for a new
// thread; for the main thread, what the dynamic loader and every earlier
// image of the process (the programs that exec'd into this one) used,
// which this image's samples could not see. Added after stack.
SPOOR_EVENT(kThreadStart, g_threads,
            (EventInfo{.name = "ThreadStart", .id = 1, .version = 1, .level = Level::info, .keywords = kKeywordThreads,
                       .opcode = Opcode::start, .task = kTaskThread}),
            Field<uint32_t>{"tid"}, Field<uint32_t>{"parent_tid"}, Field<Ptr>{"start"},
            Field<uint64_t>{"cpu_ns"}, Field<uint32_t>{"stack"});
// Written by the ending thread as late as the shim can see it: after its
// start routine returned, or pthread_exit or cancellation unwound it, and
// after its thread_local destructors and (most) pthread key destructors;
// with_process false.
// For a thread still running when the process ends (the main thread
// returning from main, workers when a thread calls exit() or _exit()),
// written by the thread that ends the process, after the program's
// destructors, with with_process true (live_threads.h); the thread may
// still write a few events until the kernel stops it. A process killed by
// a signal writes none: its ProcessExit ends its threads. with_process was
// added after tid: traces without it have no ThreadEnd for such threads.
// cpu_ns: the CPU time (user and system) the thread had used, by its own
// clock (thread_cpu_time.h); 0 when it could not be read. Added after
// with_process.
SPOOR_EVENT(kThreadEnd, g_threads,
            (EventInfo{.name = "ThreadEnd", .id = 2, .version = 1, .level = Level::info, .keywords = kKeywordThreads,
                       .opcode = Opcode::stop, .task = kTaskThread}),
            Field<uint64_t>{"cpu_ns"}, Field<uint32_t>{"tid"}, Field<bool>{"with_process"});
// The thread's name: the one it inherited, written after ThreadStart, and
// each one set later with pthread_setname_np or prctl(PR_SET_NAME). tid is
// 0 when another thread was named and its tid could not be found.
SPOOR_EVENT(kThreadName, g_threads,
            (EventInfo{.name = "ThreadName", .id = 3, .level = Level::info, .keywords = kKeywordThreads}),
            Field<uint32_t>{"tid"}, Field<Str>{"name"});

// Called once at attach, on the main thread, after the ring is installed:
// starts the sampler (samples.h), describes the main thread and arms its
// sampling timer. Until then pthread_create and the naming hooks only
// forward to glibc.
void attach_threads();

// In a fork child that joined the recording: describes its one thread and
// arms that thread's sampling timer (timers are not inherited).
void begin_thread_after_fork();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_THREAD_PROVIDER_H
