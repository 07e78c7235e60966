// Coalesced character calls: putc, getc and their relatives
// (stdio_char_hooks.cpp) are recorded as runs, not one event per call.
//
// A program that writes or reads one character per call makes tens of
// millions of calls, each a few nanoseconds of libc's time: an event and a
// stack walk per call would make it 20-50x slower. Instead each thread
// keeps a few pending runs, one per (stream, call site, direction): a call
// that matches one only adds to its counts. A run becomes one FPutcRun or
// FGetcRun event (io_provider.h), carrying the stack of its first call,
// when
//   - a call needs a new run and every slot is taken: the run whose last
//     call is the oldest goes out;
//   - the thread writes any other Spoor.IO event (every recorder calls
//     end_char_runs() first, so the trace keeps the calls' order), fflush
//     and fclose of the stream included;
//   - a character call fails (it is written as a run of its own);
//   - the thread ends, forks, execs, or ends the process (exit, _exit).
// Several slots, not one: the copy loop `while ((c = getc(in)) != EOF)
// putc(c, out);` alternates two call sites on two streams, and libstdc++'s
// std::cin (synced with stdio) reads each character with getc from two
// sites (its underflow peeks with getc + ungetc, its uflow takes it): with
// one pending run, each of those calls would end a run, an event and a
// stack walk per character. Runs that share a slot table overlap in time;
// each carries its first call's start and its last call's end.
//
// What a crash loses: the pending runs of each thread (at most
// kCharRunSlots, the calls since its last event); everything written
// before is in the ring. When the process ends from one thread, the other
// threads' pending runs are lost the same way (they are in those threads'
// own storage, which the ending thread does not read).
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

inline constexpr uint32_t kCharRunSlots = 4;

struct CharRuns {
  CharRun slot[kCharRunSlots];  // [0, pending) hold runs; the others a null stream
  uint32_t pending = 0;
  uint32_t last = 0;            // the slot the thread's last character call used
};

// initial-exec: reading it is one %fs-relative access, never an allocation.
extern constinit thread_local CharRuns t_char_runs __attribute__((tls_model("initial-exec")));

// Writes this thread's pending runs, oldest first, and clears them
// (stdio_char_hooks.cpp).
SPOOR_NOINLINE void write_char_runs();

// Ends this thread's pending runs, if any: one TLS load and a branch when
// there are none. Signal-unsafe like the stdio calls it records: a handler
// that calls putc while its thread is inside one may lose that run.
SPOOR_ALWAYS_INLINE void end_char_runs() {
  if (SPOOR_UNLIKELY(t_char_runs.pending != 0)) write_char_runs();
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_CHAR_RUN_H
