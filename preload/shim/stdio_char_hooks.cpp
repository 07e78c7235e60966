// Interposed character calls of stdio: putc, fputc, putchar, getc, fgetc,
// getchar, their _unlocked forms and glibc's old names (_IO_putc,
// _IO_getc, which binaries built against old headers still call), and
// ungetc, which takes a byte back. Recorded as runs (stdio_run.h): FPutcRun
// and FGetcRun in io_provider.h. Also the runs' shared machinery: the slot
// table, writing runs out, and the slow-call threshold of stdio_hooks.cpp's
// block and line runs.
//
// Cost when the stdio events are on, per call that continues a pending
// run (same stream, call site and direction as the thread's previous
// character call; another pending run costs a loop over kStdioRunSlots
// more): the next function's pointer, the enabled check, three compares,
// two increments and one clock read for the run's end. Measured on the
// benchmark VM (bench/RESULTS.md, "stdio character calls"), putc() to
// /dev/null: ~2.5 ns per call untraced, ~10 ns traced, of which the clock
// read (rdtsc, ~10 ns a read here, partly overlapped) is ~5 ns. A call that
// begins a run pays a clock read more, the event write of a run it evicts
// and, under kKeywordIoTransferStacks, a stack walk.
//
// With optimization, glibc's headers inline getc_unlocked, putc_unlocked,
// fgetc_unlocked, fputc_unlocked, getchar_unlocked and putchar_unlocked
// into the program, which then calls libc only through __uflow/__overflow
// when the buffer is empty or full. __uflow is recorded (stdio_hooks.cpp:
// each refill's bytes are the file's, which the program then reads);
// __overflow is not: the last part of the buffer goes out inside fclose or
// exit, out of sight, so its counts would be short of the program's.
#undef _FORTIFY_SOURCE  // the shim defines the functions fortify wraps
#include <time.h>

#include <cstdio>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {

constinit thread_local StdioRuns t_stdio_runs __attribute__((tls_model("initial-exec")));

namespace {

void write_run(const StdioRun& run) {
  const auto bytes = static_cast<int64_t>(run.bytes);
  switch (run.call) {
    case kRunPutc:
      if (kIoFPutcRun.enabled())
        kIoFPutcRun.write(run.stream, run.fd, run.stack, run.calls, bytes, run.start_ticks, run.end_ticks);
      return;
    case kRunGetc:
      if (kIoFGetcRun.enabled())
        kIoFGetcRun.write(run.stream, run.fd, run.stack, run.calls, bytes, run.start_ticks, run.end_ticks);
      return;
    default:
      if (is_stdio_output(run.call)) {
        if (kIoFWriteRun.enabled())
          kIoFWriteRun.write(run.stream, run.fd, run.stack, run.calls, bytes, run.start_ticks, run.end_ticks,
                             run.busy_ticks, run.call);
      } else if (kIoFReadRun.enabled()) {
        kIoFReadRun.write(run.stream, run.fd, run.stack, run.calls, bytes, run.start_ticks, run.end_ticks,
                          run.busy_ticks, run.call);
      }
      return;
  }
}

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

uint64_t g_slow_stdio_call_ticks = 0;

// Ticks per kSlowStdioCallNs, from 20 us of spinning on the clock: paid
// once per process image that makes a traced block or line call (the shim
// has no calibration of its own; the recorder's is out of process). vDSO
// clock_gettime is ~25 ns, so the error is ~0.2%, and a preemption in the
// window only makes the threshold a little longer.
uint64_t calibrate_slow_stdio_call() {
  constexpr int64_t kWindowNs = 20000;
  const int64_t begin_ns = monotonic_ns();
  const uint64_t begin = spoor_port_ticks();
  int64_t now_ns;
  do now_ns = monotonic_ns();
  while (now_ns - begin_ns < kWindowNs);
  const uint64_t ticks = spoor_port_ticks() - begin;
  uint64_t threshold = static_cast<uint64_t>(static_cast<__uint128_t>(ticks) * kSlowStdioCallNs /
                                             static_cast<uint64_t>(now_ns - begin_ns));
  if (threshold == 0) threshold = 1;
  __atomic_store_n(&g_slow_stdio_call_ticks, threshold, __ATOMIC_RELAXED);
  return threshold;
}

void write_stdio_runs() {
  StdioRuns& runs = t_stdio_runs;
  // Oldest first (by first call): at most kStdioRunSlots, a selection.
  while (runs.pending != 0) {
    uint32_t oldest = 0;
    for (uint32_t i = 1; i < runs.pending; ++i)
      if (runs.slot[i].start_ticks < runs.slot[oldest].start_ticks) oldest = i;
    write_run(runs.slot[oldest]);
    runs.slot[oldest] = runs.slot[--runs.pending];
    runs.slot[runs.pending].stream = nullptr;
  }
  runs.last = 0;
}

StdioRun& new_stdio_run() {
  StdioRuns& runs = t_stdio_runs;
  if (runs.pending == kStdioRunSlots) {  // the run whose last call is the oldest makes room
    uint32_t idle = 0;
    for (uint32_t i = 1; i < kStdioRunSlots; ++i)
      if (runs.slot[i].end_ticks < runs.slot[idle].end_ticks) idle = i;
    write_run(runs.slot[idle]);
    runs.slot[idle] = runs.slot[--runs.pending];
    runs.slot[runs.pending].stream = nullptr;
  }
  runs.last = runs.pending;
  return runs.slot[runs.pending++];
}

namespace {

using PutcFn = int (*)(int, FILE*);
using PutcharFn = int (*)(int);
using GetcFn = int (*)(FILE*);
using GetcharFn = int (*)();

constinit NextFunction<PutcFn> g_putc{"putc"}, g_fputc{"fputc"}, g_io_putc{"_IO_putc"},
    g_putc_unlocked{"putc_unlocked"}, g_fputc_unlocked{"fputc_unlocked"};
constinit NextFunction<PutcharFn> g_putchar{"putchar"}, g_putchar_unlocked{"putchar_unlocked"};
constinit NextFunction<GetcFn> g_getc{"getc"}, g_fgetc{"fgetc"}, g_io_getc{"_IO_getc"},
    g_getc_unlocked{"getc_unlocked"}, g_fgetc_unlocked{"fgetc_unlocked"};
constinit NextFunction<GetcharFn> g_getchar{"getchar"}, g_getchar_unlocked{"getchar_unlocked"};
constinit NextFunction<PutcFn> g_ungetc{"ungetc"};

SPOOR_NOINLINE int unavailable() {
  errno = ENOSYS;
  return EOF;
}

// Every call the fast path does not take: the first of a run, a failure,
// getc's EOF. `run`: the pending run the call continues, or null. Called
// from the hook itself (its body is always_inline), so the stack skip of
// transfer_stack holds.
SPOOR_NOINLINE void record_char_call(FILE* stream, const void* site, bool output, int result, StdioRun* run,
                                     uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  const uint64_t end = spoor_port_ticks();
  // putc fails with EOF; getc returns EOF at the end of the file too, and
  // has failed only when it set the stream's error flag.
  const bool failed = result == EOF && (output || ferror_unlocked(stream) != 0);
  if (run != nullptr && !failed) {  // getc's EOF: a call without a byte
    ++run->calls;
    run->end_ticks = end;
    return;
  }
  int32_t fd;
  {
    KeptErrno fileno_errno;  // fileno of a stream without a descriptor sets errno
    fd = fileno(stream);
  }
  if (failed) {  // a run of its own, written at once with its errno, after the others
    end_stdio_runs();
    const int64_t error = -static_cast<int64_t>(kept.value());
    if (output)
      kIoFPutcRun.write(stream, fd, transfer_stack(), uint64_t{1}, error, start, end);
    else
      kIoFGetcRun.write(stream, fd, transfer_stack(), uint64_t{1}, error, start, end);
    return;
  }
  const uint32_t stack = transfer_stack();
  StdioRun& fresh = new_stdio_run();
  fresh.site = site;
  fresh.calls = 1;
  fresh.bytes = result != EOF ? 1 : 0;
  fresh.start_ticks = start;
  fresh.end_ticks = end;
  fresh.busy_ticks = 0;
  fresh.stack = stack;
  fresh.fd = fd;
  fresh.call = output ? kRunPutc : kRunGetc;
  fresh.stream = stream;
}

// The body every character hook shares. `call` makes the real call; it is
// always_inline, as this body is, so that the hook is the frame right
// below record_char_call.
template <const auto& kEvent, bool kOutput, class Call>
SPOOR_ALWAYS_INLINE int traced_char(bool known, FILE* stream, const void* site, Call&& call) {
  if (SPOOR_UNLIKELY(!known)) return unavailable();
  if (SPOOR_LIKELY(!kEvent.enabled())) return call();
  StdioRun* run = run_of(t_stdio_runs, stream, site, kOutput ? kRunPutc : kRunGetc);
  if (SPOOR_LIKELY(run != nullptr)) {
    // The fast path: the real call moves one byte inside libc (no other
    // hook runs), so the run is still pending after it.
    const uint64_t previous_end = run->end_ticks;
    const int result = call();
    if (SPOOR_LIKELY(result != EOF)) {
      ++run->calls;
      ++run->bytes;
      run->end_ticks = spoor_port_ticks();
      return result;
    }
    // The call began after the run's previous one ended: its start,
    // without a clock read on the fast path.
    record_char_call(stream, site, kOutput, result, run, previous_end);
    return result;
  }
  const uint64_t start = spoor_port_ticks();
  const int result = call();
  record_char_call(stream, site, kOutput, result, nullptr, start);
  return result;
}

// ungetc gives a character back to the stream: the next read takes it
// again. Taken back from the stream's latest pending get run, so that a
// getc + ungetc peek (libstdc++'s synced std::cin does one per character)
// is not counted twice. After a read that left no pending run (fgets,
// fread), the character is counted again when read again.
SPOOR_ALWAYS_INLINE void take_back_char(FILE* stream) {
  StdioRuns& runs = t_stdio_runs;
  StdioRun* latest = nullptr;
  for (uint32_t i = 0; i < runs.pending; ++i) {
    StdioRun& run = runs.slot[i];
    if (run.stream == stream && run.call == kRunGetc && (latest == nullptr || run.end_ticks > latest->end_ticks))
      latest = &run;
  }
  if (latest != nullptr && latest->bytes != 0) --latest->bytes;
}

#define SPOOR_CALL(next, ...) [&]() __attribute__((always_inline)) { return (next)(__VA_ARGS__); }
#define SPOOR_SITE __builtin_return_address(0)

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

// --- output ------------------------------------------------------------------

SPOOR_INTERPOSE int putc(int c, FILE* stream) {
  const PutcFn next = g_putc.get();
  return traced_char<kIoFPutcRun, true>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, c, stream));
}

SPOOR_INTERPOSE int fputc(int c, FILE* stream) {
  const PutcFn next = g_fputc.get();
  return traced_char<kIoFPutcRun, true>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, c, stream));
}

SPOOR_INTERPOSE int _IO_putc(int c, FILE* stream) {
  const PutcFn next = g_io_putc.get();
  return traced_char<kIoFPutcRun, true>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, c, stream));
}

SPOOR_INTERPOSE int putc_unlocked(int c, FILE* stream) {
  const PutcFn next = g_putc_unlocked.get();
  return traced_char<kIoFPutcRun, true>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, c, stream));
}

SPOOR_INTERPOSE int fputc_unlocked(int c, FILE* stream) {
  const PutcFn next = g_fputc_unlocked.get();
  return traced_char<kIoFPutcRun, true>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, c, stream));
}

// putchar writes to the stream `stdout` names at the call, as libc's does.
SPOOR_INTERPOSE int putchar(int c) {
  const PutcharFn next = g_putchar.get();
  return traced_char<kIoFPutcRun, true>(next != nullptr, stdout, SPOOR_SITE, SPOOR_CALL(next, c));
}

SPOOR_INTERPOSE int putchar_unlocked(int c) {
  const PutcharFn next = g_putchar_unlocked.get();
  return traced_char<kIoFPutcRun, true>(next != nullptr, stdout, SPOOR_SITE, SPOOR_CALL(next, c));
}

// --- input -------------------------------------------------------------------

SPOOR_INTERPOSE int getc(FILE* stream) {
  const GetcFn next = g_getc.get();
  return traced_char<kIoFGetcRun, false>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, stream));
}

SPOOR_INTERPOSE int fgetc(FILE* stream) {
  const GetcFn next = g_fgetc.get();
  return traced_char<kIoFGetcRun, false>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, stream));
}

SPOOR_INTERPOSE int _IO_getc(FILE* stream) {
  const GetcFn next = g_io_getc.get();
  return traced_char<kIoFGetcRun, false>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, stream));
}

SPOOR_INTERPOSE int getc_unlocked(FILE* stream) {
  const GetcFn next = g_getc_unlocked.get();
  return traced_char<kIoFGetcRun, false>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, stream));
}

SPOOR_INTERPOSE int fgetc_unlocked(FILE* stream) {
  const GetcFn next = g_fgetc_unlocked.get();
  return traced_char<kIoFGetcRun, false>(next != nullptr, stream, SPOOR_SITE, SPOOR_CALL(next, stream));
}

SPOOR_INTERPOSE int getchar() {
  const GetcharFn next = g_getchar.get();
  return traced_char<kIoFGetcRun, false>(next != nullptr, stdin, SPOOR_SITE, SPOOR_CALL(next));
}

SPOOR_INTERPOSE int getchar_unlocked() {
  const GetcharFn next = g_getchar_unlocked.get();
  return traced_char<kIoFGetcRun, false>(next != nullptr, stdin, SPOOR_SITE, SPOOR_CALL(next));
}

// Not an event of its own: it adjusts the pending run (take_back_char).
SPOOR_INTERPOSE int ungetc(int c, FILE* stream) {
  const PutcFn next = g_ungetc.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable();
  const int result = next(c, stream);
  if (result != EOF && kIoFGetcRun.enabled()) take_back_char(stream);
  return result;
}

}  // extern "C"
