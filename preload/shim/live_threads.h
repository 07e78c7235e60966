// The threads of this process the shim has described and not yet seen end
// (thread_hooks.cpp adds and removes them). When the process ends with
// threads still running (exit() from main while workers run, exit() or
// _exit() from any thread), each gets a ThreadEnd with `with_process` set,
// written by the thread that ends the process, so every ThreadStart in the
// trace has its ThreadEnd.
#ifndef SPOOR_PRELOAD_LIVE_THREADS_H
#define SPOOR_PRELOAD_LIVE_THREADS_H

#include <cstdint>

namespace spoor::preload {

// Notes a described thread as running. A table of fixed size (no heap):
// beyond kMaxLiveThreads running at once, a thread is not noted and gets
// no ThreadEnd if the process ends under it.
inline constexpr int kMaxLiveThreads = 4096;
void note_thread_running(uint32_t tid);

// Forgets a thread that is ending by itself. False when the process's end
// got to it first (its ThreadEnd is written already).
bool note_thread_ended(uint32_t tid);

// Writes ThreadEnd(tid, with_process = true) for every thread still noted,
// then, given the process's exit status (exit()'s or _exit's; -1: not
// known), its own ProcessExit; once per process image, later calls do
// nothing.
void end_running_threads_with_process(int exit_status);

// Registers the on_exit handler that keeps exit()'s status for the
// process's own ProcessExit. Once per image, at attach.
void note_exit_status_at_exit();

// In a fork child: only the forking thread came along.
void forget_running_threads_after_fork();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_LIVE_THREADS_H
