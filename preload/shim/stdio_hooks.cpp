// Interposed stdio functions: the stdio layer of Spoor.IO (io_provider.h).
// Its own layer because the reads and writes stdio makes on its buffers
// happen inside libc, out of the fd hooks' reach: FRead and FWrite say what
// the program handed to or took from a stream, not what reached the file.
//
// Cost when the stdio events are off: as the fd hooks (three loads, one
// branch). When on, a block or line call (fwrite, fputs, puts, the printf
// family on a stream, fread, fgets, getline) that continues a pending run
// of its function, call site and stream (stdio_run.h) costs two clock
// reads and a few compares and stores (fold_or_record); fread, fgets and
// getline also read the stream's error flag before and after, to tell a
// failure from the end of the file. The first call of a run, and a call
// that fails, reads nothing at the end of the file or takes longer than
// 20 us, pays the event write and, under kKeywordIoTransferStacks, a stack
// walk: an FWrite or FRead of its own for the latter three, so that they
// stay visible one by one. Figures: bench/RESULTS.md ("stdio runs").
//
// dprintf and vdprintf are one FWrite each (they write to a descriptor
// through a stream of libc's own, not the program's); putc, getc and the
// other character calls are coalesced in stdio_char_hooks.cpp, into the
// same per-thread slots. Under _FORTIFY_SOURCE and
// optimization, compilers turn printf("x\n") into puts, printf("x") into
// putchar, printf with a format into __printf_chk, vprintf into
// __vfprintf_chk(stdout), dprintf into __dprintf_chk and getline into
// __getdelim: each of those is interposed too.
//
// A hook whose next definition is unknown (a lookup running on this thread:
// dlsym does no stdio, so this does not arise in practice) fails with
// ENOSYS rather than recurse into the lookup.
#undef _FORTIFY_SOURCE  // the shim defines the functions fortify wraps
#include <cstdarg>
#include <cstdio>

#include "stdio_run.h"
#include "io_interpose.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

using FOpenFn = FILE* (*)(const char*, const char*);
using OpenMemstreamFn = FILE* (*)(char**, size_t*);
using OpenWmemstreamFn = FILE* (*)(wchar_t**, size_t*);
using FmemopenFn = FILE* (*)(void*, size_t, const char*);
using FopencookieFn = FILE* (*)(void*, const char*, cookie_io_functions_t);
using FDOpenFn = FILE* (*)(int, const char*);
using FReopenFn = FILE* (*)(const char*, const char*, FILE*);
using StreamFn = int (*)(FILE*);
using FReadFn = size_t (*)(void*, size_t, size_t, FILE*);
using FReadChkFn = size_t (*)(void*, size_t, size_t, size_t, FILE*);
using FWriteFn = size_t (*)(const void*, size_t, size_t, FILE*);
using FGetsFn = char* (*)(char*, int, FILE*);
using FGetsChkFn = char* (*)(char*, size_t, int, FILE*);
using FPutsFn = int (*)(const char*, FILE*);
using VFPrintfFn = int (*)(FILE*, const char*, va_list);
using VFPrintfChkFn = int (*)(FILE*, int, const char*, va_list);
using PutsFn = int (*)(const char*);
using VDPrintfFn = int (*)(int, const char*, va_list);
using VDPrintfChkFn = int (*)(int, int, const char*, va_list);
using GetlineFn = ssize_t (*)(char**, size_t*, FILE*);
using GetdelimFn = ssize_t (*)(char**, size_t*, int, FILE*);
using UflowFn = int (*)(FILE*);

constinit NextFunction<FOpenFn> g_fopen{"fopen"}, g_fopen64{"fopen64"};
constinit NextFunction<FDOpenFn> g_fdopen{"fdopen"};
constinit NextFunction<OpenMemstreamFn> g_open_memstream{"open_memstream"};
constinit NextFunction<OpenWmemstreamFn> g_open_wmemstream{"open_wmemstream"};
constinit NextFunction<FmemopenFn> g_fmemopen{"fmemopen"};
constinit NextFunction<FopencookieFn> g_fopencookie{"fopencookie"};
constinit NextFunction<FReopenFn> g_freopen{"freopen"}, g_freopen64{"freopen64"};
constinit NextFunction<StreamFn> g_fclose{"fclose"}, g_fflush{"fflush"}, g_fflush_unlocked{"fflush_unlocked"};
constinit NextFunction<FReadFn> g_fread{"fread"}, g_fread_unlocked{"fread_unlocked"};
constinit NextFunction<FReadChkFn> g_fread_chk{"__fread_chk"}, g_fread_unlocked_chk{"__fread_unlocked_chk"};
constinit NextFunction<FWriteFn> g_fwrite{"fwrite"}, g_fwrite_unlocked{"fwrite_unlocked"};
constinit NextFunction<FGetsFn> g_fgets{"fgets"}, g_fgets_unlocked{"fgets_unlocked"};
constinit NextFunction<FGetsChkFn> g_fgets_chk{"__fgets_chk"}, g_fgets_unlocked_chk{"__fgets_unlocked_chk"};
constinit NextFunction<FPutsFn> g_fputs{"fputs"}, g_fputs_unlocked{"fputs_unlocked"}, g_io_fputs{"_IO_fputs"};
constinit NextFunction<PutsFn> g_puts{"puts"}, g_io_puts{"_IO_puts"};
constinit NextFunction<VDPrintfFn> g_vdprintf{"vdprintf"};
constinit NextFunction<VDPrintfChkFn> g_vdprintf_chk{"__vdprintf_chk"};
constinit NextFunction<GetlineFn> g_getline{"getline"};
constinit NextFunction<GetdelimFn> g_getdelim{"getdelim"}, g_getdelim_internal{"__getdelim"};
constinit NextFunction<UflowFn> g_uflow{"__uflow"};
constinit NextFunction<VFPrintfFn> g_vfprintf{"vfprintf"};
constinit NextFunction<VFPrintfChkFn> g_vfprintf_chk{"__vfprintf_chk"};

// What a hook with no next definition returns (see the top of the file).
template <class T>
SPOOR_NOINLINE T unavailable(T failure) {
  errno = ENOSYS;
  return failure;
}

// The descriptor under a stream; -1 for one without (fmemopen, a cookie
// stream) and for fflush's null ("every stream"). glibc's fileno takes no
// lock; for a stream without a descriptor it sets errno (the recorders
// keep the program's).
SPOOR_ALWAYS_INLINE int32_t stream_fd(FILE* stream) { return stream != nullptr ? fileno(stream) : -1; }

SPOOR_ALWAYS_INLINE uint64_t product(size_t size, size_t count) {
  uint64_t bytes;
  return __builtin_mul_overflow(size, count, &bytes) ? UINT64_MAX : bytes;
}

// A read or write failed when it set the stream's error flag: a short
// count with the flag still clear is the end of the file. Bytes moved
// before an error are reported as such (the error shows at the next call).
SPOOR_ALWAYS_INLINE int64_t transfer_result(uint64_t bytes, bool failed, int error) {
  return failed && bytes == 0 ? -static_cast<int64_t>(error) : static_cast<int64_t>(bytes);
}

// --- recording (out of line) -----------------------------------------------

SPOOR_NOINLINE void record_fopen(const char* path, const char* mode, FILE* stream, uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  end_stdio_runs();  // the thread's pending stdio runs come first
  // libc reads the mode first: an invalid one (EINVAL) leaves the path unread.
  const bool unread = stream == nullptr && (kept.value() == EFAULT || kept.value() == EINVAL);
  kIoFOpen.write(stream, stream != nullptr ? stream_fd(stream) : -kept.value(),
                 path_value(path, unread), Str(mode, strnlen(mode, 64)), start, caller_stack());
}

SPOOR_NOINLINE void record_fdopen(int fd, const char* mode, FILE* stream, uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  end_stdio_runs();  // the thread's pending stdio runs come first
  kIoFDOpen.write(stream, fd, Str(mode, strnlen(mode, 64)), stream != nullptr ? 0 : -kept.value(), start,
                  caller_stack());
}

SPOOR_NOINLINE void record_fmemopen(uint8_t call, const char* mode, FILE* stream, uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  end_stdio_runs();  // the thread's pending stdio runs come first
  kIoFMemOpen.write(stream, call, Str(mode, mode != nullptr ? strnlen(mode, 64) : 0),
                    stream != nullptr ? 0 : -kept.value(), start, caller_stack());
}

SPOOR_NOINLINE void record_freopen(const char* path, const char* mode, FILE* old, FILE* stream,
                                   uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  end_stdio_runs();  // the thread's pending stdio runs come first
  const bool unread = stream == nullptr && (kept.value() == EFAULT || kept.value() == EINVAL);
  kIoFReopen.write(old, stream, stream != nullptr ? stream_fd(stream) : -kept.value(),
                   path_value(path, unread), Str(mode, strnlen(mode, 64)), start, caller_stack());
}

SPOOR_NOINLINE void record_fclose(FILE* stream, int fd, int result, uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  end_stdio_runs();
  kIoFClose.write(stream, fd, result == 0 ? 0 : -kept.value(), start);
}

SPOOR_NOINLINE void record_fflush(FILE* stream, int result, uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  end_stdio_runs();
  kIoFFlush.write(stream, stream_fd(stream), result == 0 ? 0 : -kept.value(), start);
}

// A block or line call the fast path (fold_or_record) did not fold into
// a pending run: the first call of a run, a call that failed, read nothing
// at the end of the file or took longer than kSlowStdioCallNs, and every
// call before the threshold is calibrated. call: kIoStdio*. requested,
// bytes: as FRead's and FWrite's. failed: the call reported an error (for
// a read: it set the stream's error flag). start, end: around the call.
SPOOR_NOINLINE void record_block_call(FILE* stream, const void* site, uint8_t call, uint64_t requested,
                                      uint64_t bytes, bool failed, uint64_t start, uint64_t end) {
  KeptErrno kept;  // also undoes fileno's errno for a stream without a descriptor
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  uint64_t slow = __atomic_load_n(&g_slow_stdio_call_ticks, __ATOMIC_RELAXED);
  if (SPOOR_UNLIKELY(slow == 0)) slow = calibrate_slow_stdio_call();
  const bool output = is_stdio_output(call);
  if (failed || (!output && bytes == 0) || end - start >= slow) {
    end_stdio_runs();  // the thread's pending stdio runs come first
    const int64_t result = transfer_result(bytes, failed, kept.value());
    if (output)
      kIoFWrite.write(stream, stream_fd(stream), transfer_stack(), requested, result, start);
    else
      kIoFRead.write(stream, stream_fd(stream), transfer_stack(), requested, result, start);
    return;
  }
  if (StdioRun* run = run_of(t_stdio_runs, stream, site, call); run != nullptr) {  // before calibration
    ++run->calls;
    run->bytes += bytes;
    run->busy_ticks += end - start;
    run->end_ticks = end;
    return;
  }
  const int32_t fd = stream_fd(stream);
  const uint32_t stack = transfer_stack();
  StdioRun& fresh = new_stdio_run();
  fresh.site = site;
  fresh.calls = 1;
  fresh.bytes = bytes;
  fresh.start_ticks = start;
  fresh.end_ticks = end;
  fresh.busy_ticks = end - start;
  fresh.stack = stack;
  fresh.fd = fd;
  fresh.call = call;
  fresh.stream = stream;
}

// After a block or line call: folds it into the thread's pending run of
// the same function, call site and stream, or hands it to
// record_block_call. Cost of a folded call over the real one: two clock
// reads (start, taken by the caller, and end: rdtsc, ~10 ns each on the
// benchmark VM, partly overlapped; the run's busy time needs both), the
// threshold's load, one TLS access and three compares, four adds and
// stores. No event, no stack walk, errno untouched. site: the hook's
// return address (__builtin_return_address(0) in an always_inline body is
// the hook's own).
template <uint8_t kCall>
SPOOR_ALWAYS_INLINE void fold_or_record(FILE* stream, const void* site, uint64_t requested, uint64_t bytes,
                                        bool failed, uint64_t start) {
  const uint64_t end = spoor_port_ticks();
  const bool empty = !is_stdio_output(kCall) && bytes == 0;  // a read at the end of the file
  if (SPOOR_LIKELY(!failed && !empty && end - start < __atomic_load_n(&g_slow_stdio_call_ticks, __ATOMIC_RELAXED))) {
    StdioRun* run = run_of(t_stdio_runs, stream, site, kCall);
    if (SPOOR_LIKELY(run != nullptr)) {
      ++run->calls;
      run->bytes += bytes;
      run->busy_ticks += end - start;
      run->end_ticks = end;
      return;
    }
  }
  record_block_call(stream, site, kCall, requested, bytes, failed, start, end);
}

// dprintf and vdprintf: a descriptor, no stream of the program's.
SPOOR_NOINLINE void record_dprintf(int fd, int result, uint64_t start) {
  KeptErrno kept;
  ReentryGuard guard;
  if (!guard.entered_else_count_lost()) return;
  end_stdio_runs();  // the thread's pending stdio runs come first
  const uint64_t bytes = result >= 0 ? static_cast<uint64_t>(result) : 0;
  kIoFWrite.write(static_cast<FILE*>(nullptr), fd, transfer_stack(), bytes,
                  transfer_result(bytes, result < 0, kept.value()), start);
}

// --- the shared bodies (inlined into each hook, so that the recorders'
// stack skip holds) ---------------------------------------------------------

// `open`: the call, forwarded.
template <class Open>
SPOOR_ALWAYS_INLINE FILE* traced_fmemopen(bool found, uint8_t call, const char* mode, Open open) {
  if (SPOOR_UNLIKELY(!found)) return unavailable<FILE*>(nullptr);
  if (SPOOR_LIKELY(!kIoFMemOpen.enabled())) return open();
  const uint64_t start = spoor_port_ticks();
  FILE* stream = open();
  record_fmemopen(call, mode, stream, start);
  return stream;
}

template <class Next>
SPOOR_ALWAYS_INLINE FILE* traced_fopen(Next next, const char* path, const char* mode) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable<FILE*>(nullptr);
  if (SPOOR_LIKELY(!kIoFOpen.enabled())) return next(path, mode);
  const uint64_t start = spoor_port_ticks();
  FILE* stream = next(path, mode);
  record_fopen(path, mode, stream, start);
  return stream;
}

SPOOR_ALWAYS_INLINE FILE* traced_freopen(FReopenFn next, const char* path, const char* mode, FILE* old) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable<FILE*>(nullptr);
  if (SPOOR_LIKELY(!kIoFReopen.enabled())) return next(path, mode, old);
  const uint64_t start = spoor_port_ticks();
  FILE* stream = next(path, mode, old);
  record_freopen(path, mode, old, stream, start);
  return stream;
}

SPOOR_ALWAYS_INLINE int traced_fflush(StreamFn next, FILE* stream) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable(EOF);
  if (SPOOR_LIKELY(!kIoFFlush.enabled())) return next(stream);
  const uint64_t start = spoor_port_ticks();
  const int result = next(stream);
  record_fflush(stream, result, start);
  return result;
}

// `call` forwards with the hook's own arguments; it is always_inline too.
template <class Call>
SPOOR_ALWAYS_INLINE size_t traced_fread(bool known, size_t size, size_t count, FILE* stream, Call&& call) {
  if (SPOOR_UNLIKELY(!known)) return unavailable<size_t>(0);
  if (SPOOR_LIKELY(!kIoFRead.enabled())) return call();
  const bool had_error = ferror_unlocked(stream) != 0;
  const uint64_t start = spoor_port_ticks();
  const size_t items = call();
  const bool failed = !had_error && ferror_unlocked(stream) != 0;
  fold_or_record<kIoStdioFread>(stream, __builtin_return_address(0), product(size, count), product(size, items),
                                failed, start);
  return items;
}

template <class Call>
SPOOR_ALWAYS_INLINE char* traced_fgets(bool known, int n, FILE* stream, Call&& call) {
  if (SPOOR_UNLIKELY(!known)) return unavailable<char*>(nullptr);
  if (SPOOR_LIKELY(!kIoFRead.enabled())) return call();
  const bool had_error = ferror_unlocked(stream) != 0;
  const uint64_t start = spoor_port_ticks();
  char* line = call();
  const bool failed = !had_error && ferror_unlocked(stream) != 0;
  fold_or_record<kIoStdioFgets>(stream, __builtin_return_address(0), n > 0 ? static_cast<uint64_t>(n) : 0,
                                line != nullptr ? strlen(line) : 0, failed, start);
  return line;
}

template <class Next>
SPOOR_ALWAYS_INLINE size_t traced_fwrite(Next next, const void* buf, size_t size, size_t count, FILE* stream) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable<size_t>(0);
  if (SPOOR_LIKELY(!kIoFWrite.enabled())) return next(buf, size, count, stream);
  const uint64_t start = spoor_port_ticks();
  const size_t items = next(buf, size, count, stream);
  fold_or_record<kIoStdioFwrite>(stream, __builtin_return_address(0), product(size, count), product(size, items),
                                 items < count && size != 0, start);
  return items;
}

SPOOR_ALWAYS_INLINE int traced_fputs(FPutsFn next, const char* s, FILE* stream) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable(EOF);
  if (SPOOR_LIKELY(!kIoFWrite.enabled())) return next(s, stream);
  const uint64_t start = spoor_port_ticks();
  const int result = next(s, stream);
  // s is known readable only once fputs has returned without failing.
  const uint64_t length = result != EOF ? strlen(s) : 0;
  fold_or_record<kIoStdioFputs>(stream, __builtin_return_address(0), length, length, result == EOF, start);
  return result;
}

// The printf family forwards its arguments as a va_list to vfprintf (or
// __vfprintf_chk), which is what fprintf itself does inside glibc.
SPOOR_ALWAYS_INLINE int traced_vfprintf(FILE* stream, const char* format, va_list ap) {
  const VFPrintfFn next = g_vfprintf.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable(-1);
  if (SPOOR_LIKELY(!kIoFWrite.enabled())) return next(stream, format, ap);
  const uint64_t start = spoor_port_ticks();
  const int result = next(stream, format, ap);
  const uint64_t bytes = result >= 0 ? static_cast<uint64_t>(result) : 0;
  fold_or_record<kIoStdioPrintf>(stream, __builtin_return_address(0), bytes, bytes, result < 0, start);
  return result;
}

SPOOR_ALWAYS_INLINE int traced_vfprintf_chk(FILE* stream, int flag, const char* format, va_list ap) {
  const VFPrintfChkFn next = g_vfprintf_chk.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable(-1);
  if (SPOOR_LIKELY(!kIoFWrite.enabled())) return next(stream, flag, format, ap);
  const uint64_t start = spoor_port_ticks();
  const int result = next(stream, flag, format, ap);
  const uint64_t bytes = result >= 0 ? static_cast<uint64_t>(result) : 0;
  fold_or_record<kIoStdioPrintf>(stream, __builtin_return_address(0), bytes, bytes, result < 0, start);
  return result;
}

SPOOR_ALWAYS_INLINE int traced_puts(PutsFn next, const char* s) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable(EOF);
  if (SPOOR_LIKELY(!kIoFWrite.enabled())) return next(s);
  FILE* stream = stdout;  // the stream puts writes to, as it names it
  const uint64_t start = spoor_port_ticks();
  const int result = next(s);
  const uint64_t length = result != EOF ? strlen(s) + 1 : 0;  // and the newline
  fold_or_record<kIoStdioPuts>(stream, __builtin_return_address(0), length, length, result == EOF, start);
  return result;
}

template <class Call>
SPOOR_ALWAYS_INLINE int traced_dprintf(bool known, int fd, Call&& call) {
  if (SPOOR_UNLIKELY(!known)) return unavailable(-1);
  if (SPOOR_LIKELY(!kIoFWrite.enabled())) return call();
  const uint64_t start = spoor_port_ticks();
  const int result = call();
  record_dprintf(fd, result, start);
  return result;
}

// getline, getdelim: -1 at the end of the file and on failure; the error
// flag tells them apart, as for fgets.
template <class Call>
SPOOR_ALWAYS_INLINE ssize_t traced_getdelim(bool known, FILE* stream, Call&& call) {
  if (SPOOR_UNLIKELY(!known)) return unavailable<ssize_t>(-1);
  if (SPOOR_LIKELY(!kIoFRead.enabled())) return call();
  const bool had_error = ferror_unlocked(stream) != 0;
  const uint64_t start = spoor_port_ticks();
  const ssize_t length = call();
  const bool failed = !had_error && ferror_unlocked(stream) != 0;
  fold_or_record<kIoStdioGetline>(stream, __builtin_return_address(0), 0,
                                  length > 0 ? static_cast<uint64_t>(length) : 0, failed, start);
  return length;
}

// glibc's _IO_IN_BACKUP (libio/libio.h, not installed; the same since
// glibc 2.0): the stream reads from its ungetc backup area.
constexpr int kStreamInBackup = 0x100;

// __uflow: what glibc's inlined getc_unlocked, fgetc_unlocked and
// getchar_unlocked call (from the program, through its PLT) when the
// stream's buffer is empty. It refills the buffer and returns its first
// byte; the inlined calls take the rest without calling libc. So its byte
// count is the buffer's fill, read_end - read_base afterwards: what the
// stream took from its file, which the program then reads. libc's own
// getc, fgetc and fread reach __uflow by an internal call, not this hook,
// so those bytes are not counted twice. A stream leaving its backup area
// (kStreamInBackup) goes back to bytes already counted: not recorded.
// Cost: one refill per buffer (4 KiB, usually), as an fread call's.
SPOOR_ALWAYS_INLINE int traced_uflow(UflowFn next, FILE* stream) {
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable(EOF);
  if (SPOOR_LIKELY(!kIoFRead.enabled()) || (stream->_flags & kStreamInBackup) != 0) return next(stream);
  const bool had_error = ferror_unlocked(stream) != 0;
  const uint64_t start = spoor_port_ticks();
  const int result = next(stream);
  const bool failed = !had_error && ferror_unlocked(stream) != 0;
  const uint64_t bytes = result != EOF && stream->_IO_read_end > stream->_IO_read_base
                             ? static_cast<uint64_t>(stream->_IO_read_end - stream->_IO_read_base)
                             : 0;
  const uint64_t buffer = stream->_IO_buf_end > stream->_IO_buf_base
                              ? static_cast<uint64_t>(stream->_IO_buf_end - stream->_IO_buf_base)
                              : 0;
  fold_or_record<kIoStdioRefill>(stream, __builtin_return_address(0), buffer, bytes, failed, start);
  return result;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

// The unlocked and _chk forms of fread and fgets differ only in the call
// forwarded; a lambda keeps them on one body without an extra frame.
#define SPOOR_CALL(next, ...) [&]() __attribute__((always_inline)) { return (next)(__VA_ARGS__); }

extern "C" {

// --- open and close -----------------------------------------------------------

SPOOR_INTERPOSE FILE* fopen(const char* path, const char* mode) { return traced_fopen(g_fopen.get(), path, mode); }

SPOOR_INTERPOSE FILE* fopen64(const char* path, const char* mode) {
  return traced_fopen(g_fopen64.get(), path, mode);
}

// Streams with no descriptor: named by FMemOpen, so that their calls (fd
// -1) are told apart from a file's.
SPOOR_INTERPOSE FILE* open_memstream(char** buffer, size_t* size) {
  const OpenMemstreamFn next = g_open_memstream.get();
  return traced_fmemopen(next != nullptr, kIoMemoryOpenMemstream, "w", SPOOR_CALL(next, buffer, size));
}

SPOOR_INTERPOSE FILE* open_wmemstream(wchar_t** buffer, size_t* size) {
  const OpenWmemstreamFn next = g_open_wmemstream.get();
  return traced_fmemopen(next != nullptr, kIoMemoryOpenWmemstream, "w", SPOOR_CALL(next, buffer, size));
}

SPOOR_INTERPOSE FILE* fmemopen(void* buffer, size_t size, const char* mode) {
  const FmemopenFn next = g_fmemopen.get();
  return traced_fmemopen(next != nullptr, kIoMemoryFmemopen, mode, SPOOR_CALL(next, buffer, size, mode));
}

SPOOR_INTERPOSE FILE* fopencookie(void* cookie, const char* mode, cookie_io_functions_t functions) {
  const FopencookieFn next = g_fopencookie.get();
  return traced_fmemopen(next != nullptr, kIoMemoryFopencookie, mode, SPOOR_CALL(next, cookie, mode, functions));
}

SPOOR_INTERPOSE FILE* fdopen(int fd, const char* mode) {
  const FDOpenFn next = g_fdopen.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable<FILE*>(nullptr);
  if (SPOOR_LIKELY(!kIoFDOpen.enabled())) return next(fd, mode);
  const uint64_t start = spoor_port_ticks();
  FILE* stream = next(fd, mode);
  record_fdopen(fd, mode, stream, start);
  return stream;
}

SPOOR_INTERPOSE FILE* freopen(const char* path, const char* mode, FILE* old) {
  return traced_freopen(g_freopen.get(), path, mode, old);
}

SPOOR_INTERPOSE FILE* freopen64(const char* path, const char* mode, FILE* old) {
  return traced_freopen(g_freopen64.get(), path, mode, old);
}

SPOOR_INTERPOSE int fclose(FILE* stream) {
  const StreamFn next = g_fclose.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return unavailable(EOF);
  if (SPOOR_LIKELY(!kIoFClose.enabled())) return next(stream);
  int fd;
  {
    KeptErrno kept;  // fileno of a stream without a descriptor sets errno
    fd = stream_fd(stream);
  }
  const uint64_t start = spoor_port_ticks();
  const int result = next(stream);
  record_fclose(stream, fd, result, start);
  return result;
}

SPOOR_INTERPOSE int fflush(FILE* stream) { return traced_fflush(g_fflush.get(), stream); }

SPOOR_INTERPOSE int fflush_unlocked(FILE* stream) { return traced_fflush(g_fflush_unlocked.get(), stream); }

// --- read ----------------------------------------------------------------------

SPOOR_INTERPOSE size_t fread(void* buf, size_t size, size_t count, FILE* stream) {
  const FReadFn next = g_fread.get();
  return traced_fread(next != nullptr, size, count, stream, SPOOR_CALL(next, buf, size, count, stream));
}

SPOOR_INTERPOSE size_t fread_unlocked(void* buf, size_t size, size_t count, FILE* stream) {
  const FReadFn next = g_fread_unlocked.get();
  return traced_fread(next != nullptr, size, count, stream, SPOOR_CALL(next, buf, size, count, stream));
}

// _FORTIFY_SOURCE's fread: libc checks size * count against buf_size.
SPOOR_INTERPOSE size_t __fread_chk(void* buf, size_t buf_size, size_t size, size_t count, FILE* stream) {
  const FReadChkFn next = g_fread_chk.get();
  return traced_fread(next != nullptr, size, count, stream,
                      SPOOR_CALL(next, buf, buf_size, size, count, stream));
}

SPOOR_INTERPOSE size_t __fread_unlocked_chk(void* buf, size_t buf_size, size_t size, size_t count,
                                            FILE* stream) {
  const FReadChkFn next = g_fread_unlocked_chk.get();
  return traced_fread(next != nullptr, size, count, stream,
                      SPOOR_CALL(next, buf, buf_size, size, count, stream));
}

SPOOR_INTERPOSE char* fgets(char* buf, int n, FILE* stream) {
  const FGetsFn next = g_fgets.get();
  return traced_fgets(next != nullptr, n, stream, SPOOR_CALL(next, buf, n, stream));
}

SPOOR_INTERPOSE char* fgets_unlocked(char* buf, int n, FILE* stream) {
  const FGetsFn next = g_fgets_unlocked.get();
  return traced_fgets(next != nullptr, n, stream, SPOOR_CALL(next, buf, n, stream));
}

SPOOR_INTERPOSE char* __fgets_chk(char* buf, size_t buf_size, int n, FILE* stream) {
  const FGetsChkFn next = g_fgets_chk.get();
  return traced_fgets(next != nullptr, n, stream, SPOOR_CALL(next, buf, buf_size, n, stream));
}

SPOOR_INTERPOSE char* __fgets_unlocked_chk(char* buf, size_t buf_size, int n, FILE* stream) {
  const FGetsChkFn next = g_fgets_unlocked_chk.get();
  return traced_fgets(next != nullptr, n, stream, SPOOR_CALL(next, buf, buf_size, n, stream));
}

// --- write ---------------------------------------------------------------------

SPOOR_INTERPOSE size_t fwrite(const void* buf, size_t size, size_t count, FILE* stream) {
  return traced_fwrite(g_fwrite.get(), buf, size, count, stream);
}

SPOOR_INTERPOSE size_t fwrite_unlocked(const void* buf, size_t size, size_t count, FILE* stream) {
  return traced_fwrite(g_fwrite_unlocked.get(), buf, size, count, stream);
}

SPOOR_INTERPOSE int fputs(const char* s, FILE* stream) { return traced_fputs(g_fputs.get(), s, stream); }

SPOOR_INTERPOSE int fputs_unlocked(const char* s, FILE* stream) {
  return traced_fputs(g_fputs_unlocked.get(), s, stream);
}

SPOOR_INTERPOSE int _IO_fputs(const char* s, FILE* stream) { return traced_fputs(g_io_fputs.get(), s, stream); }

SPOOR_INTERPOSE int puts(const char* s) { return traced_puts(g_puts.get(), s); }

SPOOR_INTERPOSE int _IO_puts(const char* s) { return traced_puts(g_io_puts.get(), s); }

SPOOR_INTERPOSE int vfprintf(FILE* stream, const char* format, va_list ap) {
  return traced_vfprintf(stream, format, ap);
}

SPOOR_INTERPOSE int fprintf(FILE* stream, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int result = traced_vfprintf(stream, format, ap);
  va_end(ap);
  return result;
}

// flag > 0 asks glibc for the fortified checks (%n only in read-only
// formats, and so on): passed through unchanged.
SPOOR_INTERPOSE int __vfprintf_chk(FILE* stream, int flag, const char* format, va_list ap) {
  return traced_vfprintf_chk(stream, flag, format, ap);
}

SPOOR_INTERPOSE int __fprintf_chk(FILE* stream, int flag, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int result = traced_vfprintf_chk(stream, flag, format, ap);
  va_end(ap);
  return result;
}

// printf and vprintf forward to vfprintf on the stream `stdout` names,
// which is what glibc's own do.
SPOOR_INTERPOSE int printf(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int result = traced_vfprintf(stdout, format, ap);
  va_end(ap);
  return result;
}

SPOOR_INTERPOSE int _IO_printf(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int result = traced_vfprintf(stdout, format, ap);
  va_end(ap);
  return result;
}

SPOOR_INTERPOSE int vprintf(const char* format, va_list ap) { return traced_vfprintf(stdout, format, ap); }

SPOOR_INTERPOSE int __printf_chk(int flag, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int result = traced_vfprintf_chk(stdout, flag, format, ap);
  va_end(ap);
  return result;
}

SPOOR_INTERPOSE int __vprintf_chk(int flag, const char* format, va_list ap) {
  return traced_vfprintf_chk(stdout, flag, format, ap);
}

// --- printf to a descriptor -------------------------------------------------------
// libc writes through a stream of its own on the stack, with its internal
// write: the fd hooks do not see it, so the layers still do not overlap.

SPOOR_INTERPOSE int vdprintf(int fd, const char* format, va_list ap) {
  const VDPrintfFn next = g_vdprintf.get();
  return traced_dprintf(next != nullptr, fd, SPOOR_CALL(next, fd, format, ap));
}

SPOOR_INTERPOSE int dprintf(int fd, const char* format, ...) {
  const VDPrintfFn next = g_vdprintf.get();
  va_list ap;
  va_start(ap, format);
  const int result = traced_dprintf(next != nullptr, fd, SPOOR_CALL(next, fd, format, ap));
  va_end(ap);
  return result;
}

SPOOR_INTERPOSE int __vdprintf_chk(int fd, int flag, const char* format, va_list ap) {
  const VDPrintfChkFn next = g_vdprintf_chk.get();
  return traced_dprintf(next != nullptr, fd, SPOOR_CALL(next, fd, flag, format, ap));
}

SPOOR_INTERPOSE int __dprintf_chk(int fd, int flag, const char* format, ...) {
  const VDPrintfChkFn next = g_vdprintf_chk.get();
  va_list ap;
  va_start(ap, format);
  const int result = traced_dprintf(next != nullptr, fd, SPOOR_CALL(next, fd, flag, format, ap));
  va_end(ap);
  return result;
}

// --- lines ------------------------------------------------------------------------

SPOOR_INTERPOSE ssize_t getline(char** line, size_t* capacity, FILE* stream) {
  const GetlineFn next = g_getline.get();
  return traced_getdelim(next != nullptr, stream, SPOOR_CALL(next, line, capacity, stream));
}

SPOOR_INTERPOSE ssize_t getdelim(char** line, size_t* capacity, int delimiter, FILE* stream) {
  const GetdelimFn next = g_getdelim.get();
  return traced_getdelim(next != nullptr, stream, SPOOR_CALL(next, line, capacity, delimiter, stream));
}

// What an optimized getline() call becomes (glibc's headers inline getline
// as __getdelim(..., '\n', ...)).
SPOOR_INTERPOSE ssize_t __getdelim(char** line, size_t* capacity, int delimiter, FILE* stream) {
  const GetdelimFn next = g_getdelim_internal.get();
  return traced_getdelim(next != nullptr, stream, SPOOR_CALL(next, line, capacity, delimiter, stream));
}

// --- inlined character reads ----------------------------------------------------

SPOOR_INTERPOSE int __uflow(FILE* stream) { return traced_uflow(g_uflow.get(), stream); }

}  // extern "C"
