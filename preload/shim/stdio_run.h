// Coalesced stdio calls: the character calls (putc, getc and their
// relatives, stdio_char_hooks.cpp) and the buffered block and line calls
// (fwrite, fputs, puts, the printf family on a stream, fread, fgets,
// getline, stdio_hooks.cpp) are recorded as runs, not one event per call.
//
// A program that writes or reads one character, or one line, per call
// makes millions of calls, each tens of nanoseconds of libc's time (a
// copy into the stream's buffer): an event and a stack walk per call made
// `sort` of 1M lines 2.9x slower, putc loops 20-50x. Instead each thread
// keeps a few pending runs, one per (stream, call site, function): a call
// that matches one only adds to its counts. A run becomes one event
// (io_provider.h: FPutcRun, FGetcRun for character calls; FWriteRun,
// FReadRun, with the time spent inside the calls, for the others),
// carrying the stack of its first call, when
//   - a call needs a new run and every slot is taken: the run whose last
//     call is the oldest goes out;
//   - the thread writes any other Spoor.IO event (every recorder calls
//     end_stdio_runs() first, so the trace keeps the calls' order), fflush
//     and fclose of the stream included;
//   - the thread ends, forks, execs, or ends the process (exit, _exit).
// A call that is not folded into a run is written as an event of its own
// after the pending runs: a character call that fails (a one-call run
// with its errno); a block or line call that fails, reads nothing at the
// end of the file, or takes longer than kSlowStdioCallNs (it flushed its
// buffer to a slow pipe or disk, or waited for input): an FWrite or FRead
// with its own duration and stack, so that slow and failed calls stay
// visible one by one.
// Several slots, not one: the copy loop `while ((c = getc(in)) != EOF)
// putc(c, out);` alternates two call sites on two streams, and libstdc++'s
// std::cin (synced with stdio) reads each character with getc from two
// sites (its underflow peeks with getc + ungetc, its uflow takes it): with
// one pending run, each of those calls would end a run, an event and a
// stack walk per character. Runs that share a slot table overlap in time;
// each carries its first call's start and its last call's end.
//
// What a crash loses: the pending runs of each thread (at most
// kStdioRunSlots, the calls since its last event); everything written
// before is in the ring. When the process ends from one thread, the other
// threads' pending runs are lost the same way (they are in those threads'
// own storage, which the ending thread does not read).
#ifndef SPOOR_PRELOAD_STDIO_RUN_H
#define SPOOR_PRELOAD_STDIO_RUN_H

#include <cstdint>
#include <cstdio>

#include "spoor/config.h"

namespace spoor::preload {

// What a run's calls are: kIoStdio* (io_provider.h) for block and line
// calls, or one of these two for character calls.
inline constexpr uint8_t kRunPutc = 0xfe, kRunGetc = 0xff;

struct StdioRun {
  FILE* stream = nullptr;      // null: no run pending
  const void* site = nullptr;  // return address of the calls
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t start_ticks = 0;    // before the first call
  uint64_t end_ticks = 0;      // after the last call
  uint64_t busy_ticks = 0;     // inside the calls (block and line runs; 0 for character runs)
  uint32_t stack = 0;          // the first call's stack (0 without stacks)
  int32_t fd = -1;             // the stream's descriptor at the first call
  uint8_t call = kRunPutc;     // kRunPutc, kRunGetc or kIoStdio*
};

inline constexpr uint32_t kStdioRunSlots = 4;

struct StdioRuns {
  StdioRun slot[kStdioRunSlots];  // [0, pending) hold runs; the others a null stream
  uint32_t pending = 0;
  uint32_t last = 0;              // the slot the thread's last folded call used
};

// initial-exec: reading it is one %fs-relative access, never an allocation.
extern constinit thread_local StdioRuns t_stdio_runs __attribute__((tls_model("initial-exec")));

// Writes this thread's pending runs, oldest first, and clears them
// (stdio_char_hooks.cpp).
SPOOR_NOINLINE void write_stdio_runs();

// Ends this thread's pending runs, if any: one TLS load and a branch when
// there are none. Signal-unsafe like the stdio calls it records: a handler
// that calls putc while its thread is inside one may lose that run.
SPOOR_ALWAYS_INLINE void end_stdio_runs() {
  if (SPOOR_UNLIKELY(t_stdio_runs.pending != 0)) write_stdio_runs();
}

// The pending run a call continues, or null. The slot of the thread's
// previous folded call is tried first (a loop over one stream and site:
// one compare of three words); a slot holding no run has a null stream,
// which no call passes.
SPOOR_ALWAYS_INLINE StdioRun* run_of(StdioRuns& runs, FILE* stream, const void* site, uint8_t call) {
  StdioRun* run = &runs.slot[runs.last];
  if (SPOOR_LIKELY(run->stream == stream && run->site == site && run->call == call)) return run;
  for (uint32_t i = 0; i < kStdioRunSlots; ++i) {
    run = &runs.slot[i];
    if (run->stream == stream && run->site == site && run->call == call) {
      runs.last = i;
      return run;
    }
  }
  return nullptr;
}

// A free slot for a new run, the least recently used run written out to
// make room when every slot is taken (stdio_char_hooks.cpp). The caller
// fills it in, stream last.
SPOOR_NOINLINE StdioRun& new_stdio_run();

// A block or line call longer than this is written as an event of its
// own; in ticks, calibrated on first use (stdio_char_hooks.cpp). 0 until
// then, which no call is under: the first call takes the slow path, which
// calibrates.
inline constexpr uint64_t kSlowStdioCallNs = 20000;
extern uint64_t g_slow_stdio_call_ticks;
SPOOR_NOINLINE uint64_t calibrate_slow_stdio_call();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_STDIO_RUN_H
