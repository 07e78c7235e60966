// File I/O analysis: Spoor.IO's calls attributed to files and threads.
//
// A file is a path as the program opened it (Open, FOpen, FReopen), found
// for each call by following its descriptor through Open, Dup and Close
// (and FOpen/FDOpen/FClose for stdio streams, which carry their fd) in
// each process; a fork child starts with its parent's table. A descriptor
// made by pipe, socket, eventfd... (FdCreated) or held at attach
// (FdInherited) is named by its /proc link: "pipe:[123]" is one row for
// both ends of that pipe in every process that holds it, with the
// programs that wrote to it and read from it. A descriptor the
// trace never saw named is "fd N in pid P" (never merged across
// processes), or "stdin", "stdout", "stderr" for 0-2. Reads and writes of both layers (fd and stdio) add up: they do
// not overlap (io_provider.h); a socket's Send and Receive count as its
// writes and reads. A call's time is its record's timestamp minus its
// start_ticks. A run counts as its `calls` calls and its bytes, and is
// never one of the slowest calls (the slow ones are not in runs): a run of
// block or line calls (FWriteRun, FReadRun) takes its busy_ticks, the time
// inside its calls; a run of character calls (FPutcRun, FGetcRun) takes
// none (its span holds the program's time between the calls; a failed
// call's run of one takes its span, that call's time).
//
// Sockets: a connected one is named by its peer ("tcp 127.0.0.1:8080
// (socket)", from Connect, also one still in progress, or Accept), a bound
// one not connected by its local address ("udp 0.0.0.0:53 (bound)", "tcp
// 0.0.0.0:80 (bound)" until its Listen makes it "tcp 0.0.0.0:80
// (listening)"; in a trace without Listen events, its first Accept does),
// an accepted unix one without a peer address by its listener's ("unix
// /run/x.sock (accepted)"), and one that only sends to destinations it
// names (sendto, sendmsg's msg_name), never connected nor bound, by the
// first of them ("udp 10.0.0.53:53 (sendto)", "... (sendto, +2 more
// destinations)": the protocol from its Socket event, a datagram socket's
// when the trace has none); its "socket:[ino]" row is folded into that
// name when the trace ends (io_names.h decodes).
//
// Paths: an open's relative path is made absolute against the working
// directory (ProcessStart's cwd, then each Chdir's) or openat's directory
// descriptor when its path is known, and "." and ".." are taken out
// lexically: "t.db" opened in /srv and "/srv/./t.db" are one row. A trace
// without ProcessStart keeps relative paths as they were passed.
#ifndef SPOOR_ANALYSIS_IO_H
#define SPOOR_ANALYSIS_IO_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spoor/analysis/load.h"
#include "spoor/reader/model.h"

namespace spoor::analysis {

struct IoTotals {
  uint64_t opens = 0;     // Open, FOpen, FReopen, FDOpen
  uint64_t reads = 0;     // Read, FRead, Receive calls and the calls of FReadRun and FGetcRun runs
  uint64_t writes = 0;    // Write, FWrite, Send calls and the calls of FWriteRun and FPutcRun runs
  uint64_t other = 0;     // Close, Seek, Sync, Dup, FClose, FFlush, Connect, Bind, Listen, Accept, Chdir
  uint64_t errors = 0;    // calls that returned -errno (or a failed open)
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  int64_t read_ns = 0;
  int64_t write_ns = 0;
  int64_t total_ns = 0;   // every call's time
};

struct IoFile {
  std::string path;
  IoTotals totals;
  std::vector<uint32_t> pids;  // processes that used it, in order
  // A pipe's: the programs (base names of the images' argv[0]) that wrote
  // to it and that read from it, in order of their first call.
  std::vector<std::string> writers;
  std::vector<std::string> readers;
};

// Requests a program handed to io_uring (UringSubmit) and what the trace
// has of their completions: each completion found counts its bytes as its
// request's file's, like a call's; `uncollected` requests have none in the
// trace (completed after the last call on the ring the shim saw, or still
// in flight at the end); `unseen` completions were reaped by the program
// where the shim could not read them (UringUnseen); `unmatched`
// completions are of requests whose hand-over the trace does not have (a
// program that submits with its own inline system calls).
struct IoUringCounts {
  uint64_t requests = 0;
  uint64_t completions = 0;
  uint64_t uncollected = 0;
  uint64_t unseen = 0;
  uint64_t unmatched = 0;
};

// Asynchronous requests (POSIX AIO, Linux AIO: AioSubmit) and their
// results collected (AioReturn). `uncollected` requests have no result in
// the trace: a program may reap Linux AIO results from the kernel's ring
// itself, or never collect a POSIX AIO result; their bytes are not
// counted.
struct IoAioCounts {
  uint64_t requests = 0;
  uint64_t results = 0;
  uint64_t uncollected = 0;
};

// Bytes read and written over the trace, from its first call that moved
// a byte to its last, in up to 64 columns of equal time (a power of two
// of nanoseconds): each the bytes of the calls that ended in it.
struct IoTimeline {
  int64_t start_ns = 0;
  int64_t column_ns = 0;  // 0: no call read or wrote a byte
  std::vector<uint64_t> read_bytes;
  std::vector<uint64_t> written_bytes;
};

struct IoThread {
  ThreadIndex thread = kNone;
  IoTotals totals;
};

struct IoOperation {
  std::string call;  // "Read", "FWrite", ...
  uint32_t file = 0; // index into IoAnalysis::files()
  ThreadIndex thread = kNone;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  int64_t result = 0;  // bytes, fd, or -errno
};

class IoAnalysis final : public EventVisitor {
 public:
  // `clock` converts start_ticks; `slowest` operations are kept.
  explicit IoAnalysis(const reader::Clock& clock, size_t slowest = 20);
  IoAnalysis(IoAnalysis&&) noexcept;
  IoAnalysis& operator=(IoAnalysis&&) noexcept;
  ~IoAnalysis() override;

  // Cost per I/O event: one or two hash lookups (the process's fd table);
  // an open also builds its absolute path (a string the length of the
  // path and the working directory).
  void on_event(const reader::Event& event, const EventContext& context) override;
  // The I/O events and Fork (a child's inherited descriptors).
  bool wants(EventKind kind) const override;
  // Merges the rows of sockets that got their name from a later call;
  // names pipes by their writers and readers.
  void on_end(const TraceModel& model) override;

  const std::vector<IoFile>& files() const;      // in order of first use
  const std::vector<IoThread>& threads() const;  // threads that made a call, in order of first one
  std::vector<IoOperation> slowest() const;      // slowest first
  const IoTotals& totals() const;
  const IoTimeline& timeline() const;  // complete after on_end
  const IoUringCounts& uring() const;
  const IoAioCounts& aio() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_IO_H
