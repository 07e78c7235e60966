// Coalesced character calls: putc, getc and their relatives
// (stdio_char_hooks.cpp) are recorded as runs, not one event per call.
//
// A program that writes or reads one character per call makes tens of
// millions of calls, each a few nanoseconds of libc's time: an event and a
// stack walk per call would make it 20-50x slower. Instead each thread
// keeps one pending run: consecutive calls on the same stream, in the same
// direction, from the same call site (return address) only add to its
// counts. The run becomes one FPutcRun or FGetcRun event (io_provider.h),
// carrying the stack of its first call, when
//   - a call comes from another site or for another stream or direction;
//   - the thread writes any other Spoor.IO event (every recorder calls
//     end_char_run() first, so the trace keeps the calls' order);
//   - the thread ends, forks, execs, or ends the process (exit, _exit).
// fflush and fclose of the stream are Spoor.IO events: the run goes out
// before them.
//
// What a crash loses: the pending run of each thread (the calls since its
// last event), at most one run per thread; everything written before is in
// the ring. When the process ends from one thread, the other threads'
// pending runs are lost the same way (they are in those threads' own
// storage, which the ending thread does not read).
#ifndef SPOOR_PRELOAD_CHAR_RUN_H
#define SPOOR_PRELOAD_CHAR_RUN_H

#include <cstdint>
#include <cstdio>

#include "spoor/config.h"

namespace spoor::preload {

struct CharRun {
  FILE* stream = nullptr;      // null: no run pending
  const void* site = nullptr;  // return address of the calls
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t start_ticks = 0;    // before the first call
  uint64_t end_ticks = 0;      // after the last call
  uint32_t stack = 0;          // the first call's stack (0 without stacks)
  int32_t fd = -1;             // the stream's descriptor at the first call
  bool output = false;         // putc family (FPutcRun) or getc family (FGetcRun)
};

// initial-exec: reading it is one %fs-relative access, never an allocation.
extern constinit thread_local CharRun t_char_run __attribute__((tls_model("initial-exec")));

// Writes this thread's pending run and clears it (stdio_char_hooks.cpp).
SPOOR_NOINLINE void write_char_run();

// Ends this thread's pending run, if any: one TLS load and a branch when
// there is none. Signal-unsafe like the stdio calls it records: a handler
// that calls putc while its thread is inside one may lose that run.
SPOOR_ALWAYS_INLINE void end_char_run() {
  if (SPOOR_UNLIKELY(t_char_run.stream != nullptr)) write_char_run();
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_CHAR_RUN_H
