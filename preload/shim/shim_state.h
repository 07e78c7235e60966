// Whether this process is being traced (its region is mapped and its rings
// installed): hooks that do more than write an event (exec's environment
// fix-up) check it first.
#ifndef SPOOR_PRELOAD_SHIM_STATE_H
#define SPOOR_PRELOAD_SHIM_STATE_H

#include <cstdint>

namespace spoor::preload {

bool shim_attached();

// The shim's own start on a thread (its constructor, a fork child's
// joining, a new thread's set-up) for a report to tell the system calls
// made meanwhile from the program's: shim_clock_ns() (CLOCK_MONOTONIC,
// through the vDSO) as it begins, note_shim_started(began) as it ends
// (ShimStarted, process_events.h).
uint64_t shim_clock_ns();
void note_shim_started(uint64_t began_ns);

// In the child of a clone() that made a process with memory of its own:
// glibc runs no fork handlers there, so the clone hook calls this first.
// The child leaves its parent's rings and joins the recording as a fork
// child does.
void begin_cloned_process();

// The pid that attached (0 when not attached), as getpid() says it.
uint32_t shim_pid();
// The same process as the trace names it: the recorder's number for it,
// another one in a pid namespace of its own.
uint32_t shim_trace_pid();

// The connection to the recorder: -1 when not attached, or when the
// program has put a descriptor of its own on its number (then nothing more
// is said to the recorder over it).
int shim_connection();

// Counts a call a signal handler made while its thread was inside the
// shim, which cannot be recorded there: a lost event of the current CPU,
// and one more in the region's header, so the recorder can tell these
// from a full ring. Async-signal-safe.
void count_handler_call_lost();
// Counts n allocations made before attach past the pre-attach log's end
// (pre_attach_log.h) as lost events, and as such in the region's header.
void count_pre_attach_calls_lost(uint64_t n);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SHIM_STATE_H
