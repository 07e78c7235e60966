// Interposed character calls of stdio: putc, fputc, putchar, getc, fgetc,
// getchar, their _unlocked forms and glibc's old names (_IO_putc,
// _IO_getc, which binaries built against old headers still call).
// Recorded as runs (char_run.h): FPutcRun and FGetcRun in io_provider.h.
//
// Cost when the stdio events are on, per call that continues the pending
// run (same stream, call site and direction): the next function's pointer,
// the enabled check, three compares against the thread's run, two
// increments and one clock read (rdtsc), ~4 ns over the real call on the
// benchmark machine: putc() to /dev/null, 20 M calls, 2.6 ns untraced and
// 6.6 ns traced per call (bench/RESULTS.md, "stdio character calls"). A
// call that begins a new run pays the event write of the run it ends and,
// under kKeywordIoTransferStacks, a stack walk (~1 us).
//
// Out of reach: with optimization, glibc's headers inline getc_unlocked,
// putc_unlocked, fgetc_unlocked, fputc_unlocked, getchar_unlocked and
// putchar_unlocked into the program, which then calls libc only through
// __uflow/__overflow when the buffer is empty or full. Those calls are not
// recorded: their byte counts are not the program's.
#undef _FORTIFY_SOURCE  // the shim defines the functions fortify wraps
#include <cstdio>

#include "char_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {

constinit thread_local CharRun t_char_run __attribute__((tls_model("initial-exec")));

void write_char_run() {
  CharRun& run = t_char_run;
  FILE* stream = run.stream;
  run.stream = nullptr;
  if (stream == nullptr) return;
  const auto bytes = static_cast<int64_t>(run.bytes);
  if (run.output) {
    if (kIoFPutcRun.enabled())
      kIoFPutcRun.write(stream, run.fd, run.calls, bytes, run.start_ticks, run.end_ticks, run.stack);
  } else if (kIoFGetcRun.enabled()) {
    kIoFGetcRun.write(stream, run.fd, run.calls, bytes, run.start_ticks, run.end_ticks, run.stack);
  }
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

SPOOR_NOINLINE int unavailable() {
  errno = ENOSYS;
  return EOF;
}

// Every call the fast path does not take: the first of a run, one from
// another site or stream, a failure, getc's EOF. `continues`: the call
// matched the pending run before it was made. Called from the hook itself
// (its body is always_inline), so the stack skip of transfer_stack holds.
SPOOR_NOINLINE void record_char_call(FILE* stream, const void* site, bool output, int result, bool continues,
                                     uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered()) return;
  const uint64_t end = spoor_port_ticks();
  // putc fails with EOF; getc returns EOF at the end of the file too, and
  // has failed only when it set the stream's error flag.
  const bool failed = result == EOF && (output || ferror_unlocked(stream) != 0);
  CharRun& run = t_char_run;
  if (continues && !failed && run.stream == stream) {  // getc's EOF: a call without a byte
    ++run.calls;
    run.end_ticks = end;
    return;
  }
  end_char_run();
  int32_t fd;
  {
    KeptErrno fileno_errno;  // fileno of a stream without a descriptor sets errno
    fd = fileno(stream);
  }
  if (failed) {  // a run of its own, written at once with its errno
    const int64_t error = -static_cast<int64_t>(kept.value());
    if (output)
      kIoFPutcRun.write(stream, fd, uint64_t{1}, error, start, end, transfer_stack());
    else
      kIoFGetcRun.write(stream, fd, uint64_t{1}, error, start, end, transfer_stack());
    return;
  }
  run.site = site;
  run.calls = 1;
  run.bytes = result != EOF ? 1 : 0;
  run.start_ticks = start;
  run.end_ticks = end;
  run.stack = transfer_stack();
  run.fd = fd;
  run.output = output;
  run.stream = stream;  // last: a run with a stream is complete
}

// The body every character hook shares. `call` makes the real call; it is
// always_inline, as this body is, so that the hook is the frame right
// below record_char_call.
template <const auto& kEvent, bool kOutput, class Call>
SPOOR_ALWAYS_INLINE int traced_char(bool known, FILE* stream, const void* site, Call&& call) {
  if (SPOOR_UNLIKELY(!known)) return unavailable();
  if (SPOOR_LIKELY(!kEvent.enabled())) return call();
  CharRun& run = t_char_run;
  if (SPOOR_LIKELY(run.stream == stream && run.site == site && run.output == kOutput)) {
    // The fast path: the real call moves one byte inside libc (no other
    // hook runs), so the run is still this thread's pending one after it.
    const uint64_t previous_end = run.end_ticks;
    const int result = call();
    if (SPOOR_LIKELY(result != EOF)) {
      ++run.calls;
      ++run.bytes;
      run.end_ticks = spoor_port_ticks();
      return result;
    }
    // The call began after the previous one ended: its start, without a
    // clock read on the fast path.
    record_char_call(stream, site, kOutput, result, true, previous_end);
    return result;
  }
  const uint64_t start = spoor_port_ticks();
  const int result = call();
  record_char_call(stream, site, kOutput, result, false, start);
  return result;
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

}  // extern "C"
