// The I/O provider of libspoor-preload.so ("Spoor.IO"): one event per file
// call the program makes, in two layers a session enables separately.
//
//   fd layer (kKeywordIoFd):       open*, close, close_range, closefrom,
//                                  read/write and their positional and
//                                  vector forms, sendfile, splice, tee,
//                                  copy_file_range, lseek, fsync, dup* and
//                                  fcntl(F_DUPFD*); connect, bind,
//                                  listen, accept, socket, send/recv and
//                                  their to/from/msg/mmsg forms, chdir,
//                                  fchdir; POSIX AIO's requests and
//                                  their results; and the descriptors
//                                  the process had when the shim attached.
//   stdio layer (kKeywordIoStdio): fopen, fdopen, freopen, fclose, fread,
//                                  fgets, getline, getdelim, fwrite, fputs,
//                                  puts, the printf family (printf,
//                                  fprintf, dprintf and their v and _chk
//                                  forms), fflush; runs of those calls
//                                  (FWriteRun, FReadRun) and of putc,
//                                  getc and the other character calls.
//
// The layers do not overlap: the reads and writes stdio makes inside libc
// (a refill of fread's buffer, the flush of fwrite's) call libc's internal
// functions, which no preloaded library can interpose. A consumer sums
// bytes per layer, never across them.
//
// Timing: every event carries `start_ticks`, the tick counter read just
// before the real call; the record's own timestamp is taken as it is
// written, just after the call returns. duration = timestamp - start_ticks,
// both in the trace's ticks, converted by its CLOCK block. That is one clock
// read per call where a `duration` field would need two, for the same 8
// bytes; and to_ns(start_ticks) places the call's start on the time axis.
//
// Field order: in the events of fixed size the 8-byte fields sit at 8-byte
// offsets of the body, the narrower ones in pairs between them or at the
// end (version 1 of the events that had it otherwise; a test holds every
// fixed-size event to it, io_record_test.cpp). The packer looks
// at a body's 8-byte words (core/compress): a time there is kept with the
// plain bytes, a pointer becomes a reference, where a time or an offset
// split across two words made two words of values never seen again, each
// a lookup in the packer's model (a git log -p trace packed 1.6x faster
// once its stdio runs were aligned).
//
// Results follow the kernel's convention: bytes or a new fd when the call
// succeeded, -errno when it failed.
//
// Paths appear only in the open events, FdInherited, FdCreated and Chdir;
// open paths are as the program passed them (relative to the working
// directory, or to openat's dirfd). To attribute a read to its file, a
// consumer follows the fd through Open, Dup (the new fd refers to the same
// file; a dup2/dup3 target's previous file is closed) and Close events, and
// a stream through FOpen/FDOpen/FReopen/FClose. Events are written after
// the call returns, so when one thread closes a descriptor and another gets
// the same number from an open a few hundred nanoseconds later, the Open
// may come first in time order; the Close's start_ticks is before the
// descriptor was released, and orders the two.
#ifndef SPOOR_PRELOAD_IO_PROVIDER_H
#define SPOOR_PRELOAD_IO_PROVIDER_H

#include <cstdint>

#include "spoor/event.h"

namespace spoor::preload {

inline constexpr uint64_t kKeywordIoFd = 0x1;
inline constexpr uint64_t kKeywordIoStdio = 0x2;
// Not on any event: when enabled, Read, Write, FRead and FWrite carry their
// caller's stack (one unwind per call, ~10-15 ns a frame); otherwise their
// `stack` is 0. Opens carry theirs whenever Spoor.Stack is enabled.
inline constexpr uint64_t kKeywordIoTransferStacks = 0x4;

SPOOR_DECLARE_PROVIDER(g_io);

// --- fd layer -------------------------------------------------------------

// open, open64, openat, openat64, creat, creat64 and the _FORTIFY_SOURCE
// forms (__open_2, ...). dirfd: AT_FDCWD (-100) unless openat. mode: as
// passed when the flags need one (O_CREAT, O_TMPFILE), else 0.
SPOOR_EVENT(kIoOpen, g_io,
            (EventInfo{.name = "Open", .id = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"dirfd"}, Field<Str>{"path"}, Field<int32_t>{"flags"},
            Field<uint32_t>{"mode"}, Field<int32_t>{"fd"}, Field<uint64_t>{"start_ticks"},
            Field<uint32_t>{"stack"});
SPOOR_EVENT(kIoClose, g_io,
            (EventInfo{.name = "Close", .id = 2, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<int32_t>{"result"}, Field<uint64_t>{"start_ticks"});
// read, __read_chk, pread(64), __pread(64)_chk, readv, preadv(64),
// preadv(64)v2. offset: -1 when the call reads at the file position.
// vectors: the iovec count of the vector forms, 0 for a plain buffer.
// requested: the bytes asked for (for a vector form whose call failed, 0:
// the vector may not be readable).
SPOOR_EVENT(kIoRead, g_io,
            (EventInfo{.name = "Read", .id = 3, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<uint32_t>{"vectors"}, Field<int64_t>{"offset"},
            Field<uint64_t>{"requested"}, Field<int64_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// write, pwrite(64), writev, pwritev(64), pwritev(64)v2; fields as Read.
SPOOR_EVENT(kIoWrite, g_io,
            (EventInfo{.name = "Write", .id = 4, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<uint32_t>{"vectors"}, Field<int64_t>{"offset"},
            Field<uint64_t>{"requested"}, Field<int64_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// lseek, lseek64. result: the new position or -errno.
SPOOR_EVENT(kIoSeek, g_io,
            (EventInfo{.name = "Seek", .id = 5, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<int32_t>{"whence"}, Field<int64_t>{"offset"},
            Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"});
// fsync (data_only false), fdatasync (true).
SPOOR_EVENT(kIoSync, g_io,
            (EventInfo{.name = "Sync", .id = 6, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<int32_t>{"result"}, Field<uint64_t>{"start_ticks"},
            Field<bool>{"data_only"});
// dup, dup2, dup3, fcntl(F_DUPFD), fcntl(F_DUPFD_CLOEXEC). target: dup2's
// and dup3's new fd, F_DUPFD's lowest acceptable fd, -1 for dup. flags:
// O_CLOEXEC when the copy is close-on-exec. result: the new fd or -errno.
SPOOR_EVENT(kIoDup, g_io,
            (EventInfo{.name = "Dup", .id = 7, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<int32_t>{"target"}, Field<int32_t>{"flags"},
            Field<int32_t>{"result"}, Field<uint64_t>{"start_ticks"});

// --- stdio layer ----------------------------------------------------------

// fopen, fopen64. stream: null when the call failed. fd: the stream's
// descriptor, or -errno when the call failed.
SPOOR_EVENT(kIoFOpen, g_io,
            (EventInfo{.name = "FOpen", .id = 20, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<Str>{"path"}, Field<Str>{"mode"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// fdopen: fd is the argument; result 0 or -errno.
SPOOR_EVENT(kIoFDOpen, g_io,
            (EventInfo{.name = "FDOpen", .id = 21, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<Str>{"mode"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// freopen, freopen64. old_stream is closed whatever the outcome; stream is
// the same pointer on success, null on failure. path: empty when only the
// mode changed. fd: as FOpen.
SPOOR_EVENT(kIoFReopen, g_io,
            (EventInfo{.name = "FReopen", .id = 22, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"old_stream"}, Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<Str>{"path"},
            Field<Str>{"mode"}, Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// fd: the stream's descriptor before the close (-1 for one without).
SPOOR_EVENT(kIoFClose, g_io,
            (EventInfo{.name = "FClose", .id = 23, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"});
// fread, fgets, getline, getdelim (and __getdelim) and their _unlocked and
// _chk forms: a call that failed, read nothing at the end of the file, or
// took longer than kSlowStdioCallNs; the others are in FReadRun. requested: size * count (fread), the buffer size (fgets), 0
// (getline: the line's length is not known before). result: the bytes read,
// or -errno when the call failed without reading any (getline at the end of
// the file: 0).
SPOOR_EVENT(kIoFRead, g_io,
            (EventInfo{.name = "FRead", .id = 24, .version = 1, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<uint32_t>{"stack"}, Field<uint64_t>{"requested"},
            Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"});
// fwrite, fputs, puts, and the printf family (printf, vprintf, fprintf,
// vfprintf, dprintf, vdprintf) and their _unlocked and _chk forms: every
// dprintf and vdprintf, and each other call that failed or took longer
// than kSlowStdioCallNs; the others are in FWriteRun. requested: the bytes handed over (for the formatted forms, the bytes the
// format produced, 0 when it failed; puts counts its newline). result: as
// FRead. dprintf and vdprintf write to a descriptor through a stream of
// their own inside libc: stream is null, fd the descriptor.
SPOOR_EVENT(kIoFWrite, g_io,
            (EventInfo{.name = "FWrite", .id = 25, .version = 1, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<uint32_t>{"stack"}, Field<uint64_t>{"requested"},
            Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"});
// fflush, fflush_unlocked. stream null: every output stream (fd -1).
SPOOR_EVENT(kIoFFlush, g_io,
            (EventInfo{.name = "FFlush", .id = 26, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"});

// --- added later (registered last, after every other provider's events) ---

// A descriptor the process had when the shim attached: inherited from the
// parent (stdin, stdout, stderr, a shell's redirection, a pipe), opened by
// another library's constructor, or kept across an exec. One per open fd,
// written once at attach (in each process and after each exec), before the
// program's own calls. path: what /proc/self/fd/N links to (a file's path,
// "pipe:[ino]", "socket:[ino]", "anon_inode:[eventfd]", "/dev/pts/0").
// flags: fcntl(F_GETFL), with O_CLOEXEC added when FD_CLOEXEC is set.
// offset: the file position, or -errno where there is none (ESPIPE for a
// pipe, socket or terminal).
SPOOR_EVENT(kIoFdInherited, g_io,
            (EventInfo{.name = "FdInherited", .id = 8, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Str>{"path"}, Field<int32_t>{"flags"}, Field<int64_t>{"offset"});
// close_range(first, last, flags), and closefrom(first) as
// (first, 0xffffffff, 0, 0). Every descriptor in [first, last] is closed
// when result is 0, unless flags holds CLOSE_RANGE_CLOEXEC (they are only
// marked close-on-exec).
SPOOR_EVENT(kIoCloseRange, g_io,
            (EventInfo{.name = "CloseRange", .id = 9, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<uint32_t>{"last"}, Field<int32_t>{"flags"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"});
// Bytes moved from one descriptor to another inside the kernel: sendfile,
// sendfile64, splice, tee, copy_file_range. They count as read from `fd`
// and written to `target` (tee copies without consuming: written only).
// offset, target_offset: the explicit offsets passed, -1 for none (at the
// file position). call: kIoCopy* below. requested: the length asked for.
// result: bytes moved or -errno.
inline constexpr uint8_t kIoCopySendfile = 0, kIoCopySplice = 1, kIoCopyTee = 2, kIoCopyFileRange = 3;
SPOOR_EVENT(kIoCopy, g_io,
            (EventInfo{.name = "Copy", .id = 10, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<int32_t>{"target"}, Field<int64_t>{"offset"},
            Field<int64_t>{"target_offset"}, Field<uint64_t>{"requested"}, Field<int64_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"}, Field<uint8_t>{"call"});

// A descriptor the process made without opening a path: pipe, pipe2 and
// socketpair (one event per end), socket, accept, accept4, eventfd,
// memfd_create, epoll_create, epoll_create1, timerfd_create and tmpfile
// (temp_file_hooks.cpp; the mkstemp family writes Open). Written
// after the call succeeds; a failed call writes nothing. path: what /proc/self/fd/N links to, the
// text FdInherited gives every other process's copy ("pipe:[ino]",
// "socket:[ino]", "anon_inode:[eventfd]", "/memfd:name (deleted)"), so
// that both ends of a pipe, and each process's copy of it, share a name.
// call: kIoCreate* below. A dup of the descriptor is a Dup event, as for
// any other.
inline constexpr uint8_t kIoCreatePipe = 0, kIoCreatePipe2 = 1, kIoCreateSocket = 2, kIoCreateSocketpair = 3,
                         kIoCreateAccept = 4, kIoCreateAccept4 = 5, kIoCreateEventfd = 6,
                         kIoCreateMemfd = 7, kIoCreateEpoll = 8, kIoCreateTimerfd = 9,
                         kIoCreateTmpfile = 10, kIoCreateIoUring = 11;
SPOOR_EVENT(kIoFdCreated, g_io,
            (EventInfo{.name = "FdCreated", .id = 11, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Str>{"path"}, Field<uint8_t>{"call"}, Field<uint64_t>{"start_ticks"});

// --- sockets and the working directory (added after FdCreated) -----------
//
// A socket's address is the raw sockaddr the call took or gave back (at
// most 128 bytes, sockaddr_storage's size), as a blob: the hook copies it
// and nothing more, and readers decode it (family, port, address, unix
// path). The family is a native-endian u16 at offset 0, as Linux lays it
// out. socket_type: SO_TYPE (1 stream, 2 datagram, 3 raw, 5 seqpacket),
// asked with one getsockopt system call in the rare calls that name a
// socket (connect, bind, accept), 0 when it cannot be read; it tells tcp
// from udp, which the address does not.

// connect. result: 0, or -errno; -EINPROGRESS (-115) is a non-blocking
// connect under way, already headed for `address`. address: empty when
// the call failed with EFAULT (unreadable).
SPOOR_EVENT(kIoConnect, g_io,
            (EventInfo{.name = "Connect", .id = 12, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Blob>{"address"}, Field<uint8_t>{"socket_type"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// bind, fields as Connect. address: the local address the socket has
// after a successful call (getsockname: with the port the kernel chose
// when asked for port 0), the one asked for when the call failed.
SPOOR_EVENT(kIoBind, g_io,
            (EventInfo{.name = "Bind", .id = 13, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Blob>{"address"}, Field<uint8_t>{"socket_type"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// accept, accept4 on the listening socket `fd`. result: the new
// descriptor (which also gets its FdCreated, written just before) or
// -errno. address: the peer's, as the kernel gave it back (also when the
// caller passed no buffer: the hook then lends one); empty on failure.
// call: kIoCreateAccept or kIoCreateAccept4.
SPOOR_EVENT(kIoAccept, g_io,
            (EventInfo{.name = "Accept", .id = 14, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Blob>{"address"}, Field<uint8_t>{"socket_type"}, Field<uint8_t>{"call"},
            Field<int32_t>{"result"}, Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// send, sendto, sendmsg, sendmmsg (Send) and recv, recvfrom, recvmsg,
// recvmmsg and their _FORTIFY_SOURCE forms (Receive): transfers like Write and Read, counted
// with them. address: sendto's destination or sendmsg's msg_name; for a
// receive, the source the kernel filled in (recvfrom, recvmsg) when the
// caller asked for it and the call succeeded; empty otherwise. call:
// kIoSocket* below. flags: the MSG_* flags passed. vectors: sendmsg's and
// recvmsg's iovec count, 0 for a plain buffer. requested, result: as Read.
// stack: as Read's (kKeywordIoTransferStacks).
// sendmmsg and recvmmsg (kIoSocketSendMmsg, kIoSocketRecvMmsg) are one
// event per call, whatever the number of messages: result is the sum of
// the msg_len of the messages moved, vectors the number of those messages
// (the call's own return value), requested the size of their buffers,
// address the first message's.
inline constexpr uint8_t kIoSocketSend = 0, kIoSocketSendTo = 1, kIoSocketSendMsg = 2, kIoSocketRecv = 3,
                         kIoSocketRecvFrom = 4, kIoSocketRecvMsg = 5, kIoSocketSendMmsg = 6,
                         kIoSocketRecvMmsg = 7;
SPOOR_EVENT(kIoSend, g_io,
            (EventInfo{.name = "Send", .id = 15, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Blob>{"address"}, Field<uint8_t>{"call"}, Field<int32_t>{"flags"},
            Field<uint32_t>{"vectors"}, Field<uint64_t>{"requested"}, Field<int64_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
SPOOR_EVENT(kIoReceive, g_io,
            (EventInfo{.name = "Receive", .id = 16, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Blob>{"address"}, Field<uint8_t>{"call"}, Field<int32_t>{"flags"},
            Field<uint32_t>{"vectors"}, Field<uint64_t>{"requested"}, Field<int64_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});
// chdir (fd -1, path its argument) and fchdir (fd its argument, path
// empty). cwd: the working directory after a successful call, from the
// getcwd system call (absolute, symbolic links resolved); empty when the
// call failed. With ProcessStart's cwd it lets a reader resolve the
// relative paths of later opens. result: 0 or -errno.
SPOOR_EVENT(kIoChdir, g_io,
            (EventInfo{.name = "Chdir", .id = 17, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Str>{"path"}, Field<Str>{"cwd"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});

// Runs of character calls (stdio_run.h): the calls from one call site on
// one stream between two other Spoor.IO events of the thread, one event
// for the run (character calls from other sites, on other streams, may
// come between them: their runs overlap in time). FPutcRun: putc, fputc,
// putchar, _IO_putc and their _unlocked forms. FGetcRun: getc, fgetc,
// getchar, _IO_getc and their _unlocked forms. calls: the calls in the run.
// result: the bytes they moved (a getc that returned EOF at the end of the
// file is a call without a byte; an ungetc takes one back from the
// stream's latest run), or -errno for a one-call run whose call failed
// (putc's EOF, getc's EOF with the stream's error flag set).
// start_ticks: before the first call; end_ticks: after the last one (the
// record's own timestamp is when the run was written, which may be later).
// stack: the first call's, under kKeywordIoTransferStacks as FRead's.
SPOOR_EVENT(kIoFPutcRun, g_io,
            (EventInfo{.name = "FPutcRun", .id = 27, .version = 1, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<uint32_t>{"stack"}, Field<uint64_t>{"calls"},
            Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"}, Field<uint64_t>{"end_ticks"});
SPOOR_EVENT(kIoFGetcRun, g_io,
            (EventInfo{.name = "FGetcRun", .id = 28, .version = 1, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<uint32_t>{"stack"}, Field<uint64_t>{"calls"},
            Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"}, Field<uint64_t>{"end_ticks"});

// listen (socket_hooks.cpp). address: the local address the socket
// listens on after a successful call (getsockname: also the port the
// kernel chose for a socket listening without a bind), empty when the
// call failed. socket_type: as Connect's. backlog: as passed. A socket
// bound but never listening has a Bind and no Listen.
SPOOR_EVENT(kIoListen, g_io,
            (EventInfo{.name = "Listen", .id = 18, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<Blob>{"address"}, Field<uint8_t>{"socket_type"},
            Field<int32_t>{"backlog"}, Field<int32_t>{"result"}, Field<uint64_t>{"start_ticks"},
            Field<uint32_t>{"stack"});
// socket(domain, type, protocol), as passed (socket_type without
// SOCK_NONBLOCK and SOCK_CLOEXEC), written just after the new
// descriptor's FdCreated: what a socket is before any call names it, with
// no system call (a datagram socket that only uses sendto is never
// connected nor bound). Not written for sockets made elsewhere (accept
// has its own event; socketpair's are unix sockets named by inode).
SPOOR_EVENT(kIoSocket, g_io,
            (EventInfo{.name = "Socket", .id = 19, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<uint16_t>{"domain"}, Field<uint8_t>{"socket_type"},
            Field<int32_t>{"protocol"});

// Runs of block and line calls (stdio_run.h): the calls of one function
// from one call site on one stream between two other Spoor.IO events of
// the thread, one event for the run, as the character runs above. A call
// that failed, read nothing at the end of the file, or took longer than
// 20 us (kSlowStdioCallNs: it flushed to a slow pipe or disk, or waited for
// input) is not in a run: it is an FWrite or FRead of its own.
// FWriteRun: fwrite, fputs, puts and the printf family on a stream (not
// dprintf, vdprintf: those are FWrite). FReadRun: fread, fgets, getline,
// getdelim, and __uflow (kIoStdioRefill: an inlined getc_unlocked's call
// for more input when the stream's buffer is empty; its bytes are those it
// brought into the buffer, which the program's inlined calls then take one
// by one out of the shim's sight). call: kIoStdio* below (one function per
// run; the _unlocked, _chk and _IO_ forms count as their function; printf
// is every printf that writes to a stream). calls: the calls in the run.
// result: the bytes they moved (never negative). start_ticks: before the first call;
// end_ticks: after the last one. busy_ticks: the time inside the calls,
// summed (the run's span also holds the program's time between them).
// stack: the first call's, as FRead's.
inline constexpr uint8_t kIoStdioFwrite = 0, kIoStdioFputs = 1, kIoStdioPuts = 2, kIoStdioPrintf = 3,
                         kIoStdioFread = 4, kIoStdioFgets = 5, kIoStdioGetline = 6, kIoStdioRefill = 7;
constexpr bool is_stdio_output(uint8_t call) { return call <= kIoStdioPrintf; }
SPOOR_EVENT(kIoFWriteRun, g_io,
            (EventInfo{.name = "FWriteRun", .id = 29, .version = 1, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<uint32_t>{"stack"}, Field<uint64_t>{"calls"},
            Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"}, Field<uint64_t>{"end_ticks"},
            Field<uint64_t>{"busy_ticks"}, Field<uint8_t>{"call"});
SPOOR_EVENT(kIoFReadRun, g_io,
            (EventInfo{.name = "FReadRun", .id = 30, .version = 1, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<int32_t>{"fd"}, Field<uint32_t>{"stack"}, Field<uint64_t>{"calls"},
            Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"}, Field<uint64_t>{"end_ticks"},
            Field<uint64_t>{"busy_ticks"}, Field<uint8_t>{"call"});

// A stream with no descriptor behind it: open_memstream, open_wmemstream,
// fmemopen (the bytes stay in memory) or fopencookie (the program's own
// functions move them). Its later stdio calls carry fd -1 and this stream.
// call: kIoMemory* below. result: 0, or -errno when the call failed
// (stream null).
inline constexpr uint8_t kIoMemoryOpenMemstream = 0, kIoMemoryOpenWmemstream = 1, kIoMemoryFmemopen = 2,
                         kIoMemoryFopencookie = 3;
SPOOR_EVENT(kIoFMemOpen, g_io,
            (EventInfo{.name = "FMemOpen", .id = 31, .level = Level::info, .keywords = kKeywordIoStdio}),
            Field<Ptr>{"stream"}, Field<uint8_t>{"call"}, Field<Str>{"mode"}, Field<int32_t>{"result"},
            Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"});

// POSIX asynchronous I/O (aio_read, aio_write, aio_fsync, lio_listio and
// their 64 forms): one AioSubmit per request handed over, one AioReturn
// when the program collects its result. glibc carries the requests out on
// threads of its own through internal calls no preloaded library sees, so
// these two are all there is of them. A consumer pairs them by process
// and `aiocb` (the program's control block, which it may reuse once the
// result is collected) to learn whether the bytes were read or written.
// call: kIoAio* below (lio_listio's LIO_NOP entries are skipped). offset,
// requested: the block's aio_offset and aio_nbytes (0 for a sync). result:
// 0, or -errno when the request was refused (lio_listio: the call's, for
// each of its requests; with LIO_WAIT, -EIO means some request failed and
// its AioReturn says which).
//
// Linux AIO (io_submit and the rest, linux_aio_hooks.cpp) writes the same
// two events: `aiocb` is the kernel's struct iocb, `call` its opcode as
// kIoAio* (vectored requests with requested 0: their iovecs are not
// followed; poll and no-op requests are left out).
inline constexpr uint8_t kIoAioRead = 0, kIoAioWrite = 1, kIoAioSync = 2, kIoAioDataSync = 3;
SPOOR_EVENT(kIoAioSubmit, g_io,
            (EventInfo{.name = "AioSubmit", .id = 32, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"fd"}, Field<int32_t>{"result"}, Field<int64_t>{"offset"}, Field<uint64_t>{"requested"},
            Field<Ptr>{"aiocb"}, Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"}, Field<uint8_t>{"call"});
// aio_return, aio_return64. result: what it returned, the bytes moved, or
// -errno (the request's error, from aio_error, when it failed; EINVAL when
// the block had no request to collect). Linux AIO: each io_event of
// io_getevents, io_pgetevents or io_cancel; fd -1 for a result read from
// the kernel's ring (the block is not read then: the program may have
// freed it).
SPOOR_EVENT(kIoAioReturn, g_io,
            (EventInfo{.name = "AioReturn", .id = 33, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<Ptr>{"aiocb"}, Field<int64_t>{"result"}, Field<uint64_t>{"start_ticks"}, Field<int32_t>{"fd"});

// io_uring (uring_hooks.cpp for rings driven through liburing, uring_raw.cpp
// for rings driven through syscall()). Neither passes a libc call as it
// moves bytes, so what a trace can have is what the calls around the ring
// show: the requests each call handed to the kernel (UringSubmit, one per
// submission queue entry) and the completions the ring held after a call
// on it (UringComplete). A consumer pairs them by process, ring and
// user_data, first in first out (a program may reuse a user_data once its
// completion is reaped). ring: the ring's descriptor. call: the entry's
// opcode (IORING_OP_*). flags: the entry's IOSQE_* flags (bit 0,
// IOSQE_FIXED_FILE: fd indexes the ring's registered files). offset: the
// entry's off. requested: its len for a plain read, write, send or recv, 0
// for the others (a vectored request's len counts iovecs).
SPOOR_EVENT(kIoUringSubmit, g_io,
            (EventInfo{.name = "UringSubmit", .id = 34, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"ring"}, Field<int32_t>{"fd"}, Field<int64_t>{"offset"}, Field<uint64_t>{"requested"},
            Field<uint64_t>{"user_data"}, Field<uint64_t>{"start_ticks"}, Field<uint32_t>{"stack"},
            Field<uint8_t>{"call"}, Field<uint8_t>{"flags"});
// result: the completion's res, the bytes moved or -errno. flags: its
// IORING_CQE_F_* flags (F_MORE: a multishot request goes on).
SPOOR_EVENT(kIoUringComplete, g_io,
            (EventInfo{.name = "UringComplete", .id = 35, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"ring"}, Field<uint32_t>{"flags"}, Field<uint64_t>{"user_data"},
            Field<int64_t>{"result"});
// Completions that left the ring unseen: the program reaped them and the
// kernel may have reused their slots before the next call the shim saw.
// calls: how many.
SPOOR_EVENT(kIoUringUnseen, g_io,
            (EventInfo{.name = "UringUnseen", .id = 36, .version = 1, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<uint64_t>{"calls"}, Field<int32_t>{"ring"});
// Files registered with a ring (io_uring_register_files and its update and
// unregister forms, through liburing or syscall()), written after the call
// succeeded: a request flagged IOSQE_FIXED_FILE names its file by its index
// in this table. call: kIoUringFiles* below (register replaces the table,
// update sets entries from `first`, unregister empties it). fds: the
// descriptors as int32, -1 for an empty slot; at most 256 to an event (a
// longer table is a register and then updates).
inline constexpr uint8_t kIoUringFilesRegister = 0, kIoUringFilesUpdate = 1, kIoUringFilesUnregister = 2;
SPOOR_EVENT(kIoUringFiles, g_io,
            (EventInfo{.name = "UringFiles", .id = 37, .level = Level::info, .keywords = kKeywordIoFd}),
            Field<int32_t>{"ring"}, Field<uint8_t>{"call"}, Field<uint32_t>{"first"}, Field<Blob>{"fds"});

// Registers Spoor.IO and its events, always in the same order (attach.cpp
// calls it in its fixed-order block, so keys survive an exec).
void register_io_provider();
// The events added later, registered by attach.cpp after all the others.
void register_io_events_added_later();

// What /proc/self/fd/`fd` links to, into `out` (not NUL-terminated):
// its length, 0 when it cannot be read. System calls only (no hook runs).
size_t fd_link(int fd, char* out, size_t capacity);

// Writes FdInherited for every descriptor open now but the shim's own
// (`own_fd`: the recorder connection, and those shim_owns_descriptor
// names). Called once the ring is installed.
void describe_inherited_fds(int own_fd);

// Whether `fd` is the shim's: the recorder connection, a thread's perf
// sampling event (libunwind's pipe is closed at once: unwind_pipe.h).
// Left out of the program's listings of its descriptors
// (fd_listing_hooks.cpp).
bool shim_owns_descriptor(int fd);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_IO_PROVIDER_H
