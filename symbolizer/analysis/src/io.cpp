#include "spoor/analysis/io.h"

#include <linux/io_uring.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "spoor/analysis/io_names.h"
#include "spoor/analysis/symbolized_stacks.h"
#include "time_columns.h"

namespace spoor::analysis {
namespace {

namespace f = field;

using FdTable = std::unordered_map<int32_t, uint32_t>;  // fd -> file

struct Slower {
  bool operator()(const IoOperation& a, const IoOperation& b) const { return a.duration_ns > b.duration_ns; }
};

// A descriptor the trace never saw named (opened before the shim attached
// and not described, or made by a call the shim does not interpose). Its
// number means nothing outside its process: fd 6 of one process and fd 6
// of another are different files, so the name carries the pid. The
// standard streams keep their own names, shared by every process (most
// inherit one terminal).
std::string unknown_fd_name(int32_t fd, uint32_t pid) {
  switch (fd) {
    case 0: return "stdin";
    case 1: return "stdout";
    case 2: return "stderr";
    default:
      // A negative fd: a call given none (close(-1), as shells do) or a
      // stdio stream that has none (fmemopen's, open_memstream's).
      return fd < 0 ? "(no descriptor: fd " + std::to_string(fd) + ")"
                    : "fd " + std::to_string(fd) + " in pid " + std::to_string(pid);
  }
}

// The row of the streams FMemOpen's `call` made (kIoMemory* in
// preload/shim/io_provider.h): one per function. A cookie stream's bytes
// go through the program's own functions, not into memory.
std::string_view memory_stream_row(uint64_t call) {
  constexpr std::string_view kRows[] = {"(memory stream: open_memstream)", "(memory stream: open_wmemstream)",
                                        "(memory stream: fmemopen)", "(cookie stream: fopencookie)"};
  return call < std::size(kRows) ? kRows[call] : "(memory stream)";
}

constexpr std::string_view kPipePrefix = "pipe:[";

// A pipe's or socket's link names the kernel object by inode, the same in
// every process that holds it: both ends of one pipe, and each process's
// copy, are one row.
bool names_a_kernel_object(std::string_view link) {
  return link.starts_with(kPipePrefix) || link.starts_with("socket:[");
}

// A descriptor the process had at attach or made itself (FdInherited,
// FdCreated): its link's target, or for the standard streams when that is
// neither a path nor a pipe or socket (an anonymous inode), "stdin:
// anon_inode:[eventfd]".
std::string described_fd_name(int32_t fd, std::string_view link, uint32_t pid) {
  if (link.empty()) return unknown_fd_name(fd, pid);
  if (fd > 2 || link.front() == '/' || names_a_kernel_object(link)) return std::string(link);
  return unknown_fd_name(fd, pid) + ": " + std::string(link);
}

enum class Counted { open, read, write, other };

// What an io_uring request's opcode (IORING_OP_*) does with bytes.
Counted uring_counted(uint64_t opcode) {
  switch (opcode) {
    case IORING_OP_READV:
    case IORING_OP_READ_FIXED:
    case IORING_OP_RECVMSG:
    case IORING_OP_READ:
    case IORING_OP_RECV:
      return Counted::read;
    case IORING_OP_WRITEV:
    case IORING_OP_WRITE_FIXED:
    case IORING_OP_SENDMSG:
    case IORING_OP_WRITE:
    case IORING_OP_SEND:
      return Counted::write;
    default:
      return Counted::other;
  }
}

constexpr int32_t kAtFdcwd = -100;  // openat's "relative to the working directory"
constexpr int64_t kInProgress = -115;  // -EINPROGRESS: a non-blocking connect under way
constexpr uint8_t kStream = 1, kDatagram = 2, kSeqpacket = 5;  // SO_TYPE
constexpr int32_t kProtocolIcmp = 1, kProtocolIcmp6 = 58;     // IPPROTO_ICMP, IPPROTO_ICMPV6
constexpr std::string_view kBound = " (bound)", kListening = " (listening)", kSendto = " (sendto)";

// A row that stands for one socket until its address is known: renaming
// it (Connect, Bind, Accept) folds it into the named row. "fd N in pid P"
// is not one: that name is the descriptor number's, which a later,
// unrelated descriptor may take.
bool names_a_socket_object(std::string_view path) { return path.starts_with("socket:["); }

// A socket's row that no address has named yet: its kernel object's, or
// the descriptor's when the trace never saw it made.
bool unnamed_socket(std::string_view path) { return names_a_socket_object(path) || path.starts_with("fd "); }

// What socket() said a socket is (the Socket event); type 0 when the
// trace did not say.
struct SocketKind {
  uint8_t type = 0;
  int32_t protocol = 0;
};

// A destination of a socket named by its sends: an ICMP datagram socket
// (an unprivileged ping) is not udp, though its type says datagram.
std::string destination_name(std::span<const uint8_t> address, SocketKind kind) {
  std::string name = describe_socket_address(address, kind.type);
  const bool icmp = kind.protocol == kProtocolIcmp || kind.protocol == kProtocolIcmp6;
  if (icmp && name.starts_with("udp ")) name.replace(0, 3, "icmp");
  return name;
}

// A socket address that names something: not AF_UNSPEC (connect's way of
// dissolving a datagram socket's association), not missing.
bool names_an_endpoint(std::span<const uint8_t> address) {
  return address.size() >= 2 && (address[0] != 0 || address[1] != 0);
}

void add_totals(IoTotals& into, const IoTotals& from) {
  into.opens += from.opens;
  into.reads += from.reads;
  into.writes += from.writes;
  into.other += from.other;
  into.errors += from.errors;
  into.bytes_read += from.bytes_read;
  into.bytes_written += from.bytes_written;
  into.read_ns += from.read_ns;
  into.write_ns += from.write_ns;
  into.total_ns += from.total_ns;
}

}  // namespace

struct IoAnalysis::State {
  reader::Clock clock;
  size_t keep_slowest;
  std::vector<IoFile> files;
  // Per file, the row it was folded into when a socket got its name
  // (kNone: none). Calls count on the end of the chain; on_end merges.
  std::vector<uint32_t> folded_into;
  std::unordered_map<std::string, uint32_t> file_by_path;
  // An image's working directory since its last Chdir (before one, the
  // model's: ProcessStart's cwd).
  std::unordered_map<ImageIndex, std::string> cwd_by_image;
  std::unordered_map<uint32_t, FdTable> fds_by_pid;
  std::unordered_map<uint32_t, std::unordered_map<uint64_t, int32_t>> stream_fds_by_pid;  // FILE* -> fd
  // Streams with no descriptor (FMemOpen), per pid: FILE* -> their row.
  std::unordered_map<uint32_t, std::unordered_map<uint64_t, uint32_t>> memory_streams_by_pid;
  // POSIX AIO requests handed over and not yet collected, per pid: the
  // control block -> what the request does and its file's row.
  struct AioRequest {
    Counted what;
    uint32_t file;
  };
  std::unordered_map<uint32_t, std::unordered_map<uint64_t, AioRequest>> aio_requests_by_pid;
  // io_uring requests handed over and not completed in the trace, per
  // (pid, ring, user_data), oldest first: a program may reuse a user_data.
  std::map<std::tuple<uint32_t, int32_t, uint64_t>, std::deque<AioRequest>> uring_requests;
  IoUringCounts uring;
  IoAioCounts aio;
  uint64_t aio_replaced = 0;  // requests whose block was handed over again before a result
  // Each ring's registered files, per (pid, ring): index -> file row, or
  // kNone for an empty slot.
  std::map<std::pair<uint32_t, int32_t>, std::vector<uint32_t>> registered_files;
  std::vector<IoThread> threads;
  std::vector<uint32_t> thread_slot;  // ThreadIndex -> index in threads, or kNone
  std::priority_queue<IoOperation, std::vector<IoOperation>, Slower> slowest;  // fastest on top
  IoTotals totals;
  // The bytes over time, from the first call that moved any.
  struct BytesColumn {
    uint64_t read = 0, written = 0;
    static BytesColumn merged(const BytesColumn& a, const BytesColumn& b) {
      return {a.read + b.read, a.written + b.written};
    }
  };
  std::optional<TimeColumns<BytesColumn>> over_time;
  IoTimeline timeline;
  // Per row of a socket's kernel object ("socket:[ino]"), what socket()
  // made it.
  std::unordered_map<uint32_t, SocketKind> socket_kinds;
  // Per row named by sends ("... (sendto)"), the socket's kind and every
  // destination its sockets sent to (the row's name is the first's).
  struct SentTo {
    SocketKind kind;
    std::unordered_set<std::string> destinations;
  };
  std::unordered_map<uint32_t, SentTo> sent_to;
  // Per pipe row ("pipe:[ino]"), the images that wrote to it and read from
  // it, in order of their first call: its name says who talks through it.
  struct PipeEnds {
    std::vector<ImageIndex> writers;
    std::vector<ImageIndex> readers;
  };
  std::unordered_map<uint32_t, PipeEnds> pipe_ends;

  uint32_t file_named(std::string_view path) {
    auto [it, inserted] = file_by_path.try_emplace(std::string(path), static_cast<uint32_t>(files.size()));
    if (inserted) {
      files.emplace_back();
      files.back().path = path;
      folded_into.push_back(kNone);
    }
    return live(it->second);
  }

  uint32_t live(uint32_t file) const {
    while (folded_into[file] != kNone) file = folded_into[file];
    return file;
  }

  std::string_view cwd(const EventContext& c) const {
    auto it = cwd_by_image.find(c.image);
    if (it != cwd_by_image.end()) return it->second;
    return c.image < c.model->images.size() ? std::string_view(c.model->images[c.image].cwd) : std::string_view();
  }

  // A path as the program passed it, made absolute: relative to the
  // working directory, or to openat's directory when the trace knows its
  // path. Left as it is when neither is known.
  std::string absolute_path(std::string_view path, int32_t dirfd, const EventContext& c) {
    if (path.empty() || path.front() == '/' || dirfd == kAtFdcwd) return resolve_path(cwd(c), path);
    auto& table = fds(c);
    auto it = table.find(dirfd);
    if (it == table.end()) return std::string(path);
    return resolve_path(files[live(it->second)].path, path);
  }

  // Gives `fd` of this process the row `name`. Its row so far, when that
  // was the socket's kernel object ("socket:[ino]", the name every copy of
  // it in any process has), is folded into the new one.
  // `fold_bound`: also fold a "... (bound)" row (a listener's, named at
  // its bind).
  uint32_t rename_socket(FdTable& table, int32_t fd, const std::string& name, const EventContext& c,
                         bool fold_bound = false) {
    const uint32_t old_file = file_of_fd(table, fd, c);
    const uint32_t new_file = file_named(name);
    if (old_file == new_file || fd < 0) return new_file;
    table[fd] = new_file;
    const std::string_view old_path = files[old_file].path;
    if (names_a_socket_object(old_path) || (fold_bound && old_path.ends_with(kBound)))
      folded_into[old_file] = new_file;
    return new_file;
  }

  // A stream socket starts listening: named by `address` when the Listen
  // has one, else by its bind's address. A socket named by anything but
  // its kernel object, descriptor or bind keeps its name.
  uint32_t name_listener(FdTable& table, int32_t fd, std::span<const uint8_t> address, uint8_t type,
                         const EventContext& c) {
    const uint32_t file = file_of_fd(table, fd, c);
    const std::string_view current = files[file].path;
    std::string name;
    if (names_an_endpoint(address) && (unnamed_socket(current) || current.ends_with(kBound)))
      name = describe_socket_address(address, type) + std::string(kListening);
    else if (current.ends_with(kBound))
      name = std::string(current.substr(0, current.size() - kBound.size())) + std::string(kListening);
    else
      return file;
    return rename_socket(table, fd, name, c, true);
  }

  // A send to `address` on a socket no connect or bind named: its row
  // takes the destination's name ("udp 10.0.0.53:53 (sendto)"), and a
  // row so named notes each further destination.
  uint32_t name_by_destination(FdTable& table, int32_t fd, std::span<const uint8_t> address,
                               const EventContext& c) {
    const uint32_t file = file_of_fd(table, fd, c);
    if (auto it = sent_to.find(file); it != sent_to.end()) {
      it->second.destinations.insert(destination_name(address, it->second.kind));
      return file;
    }
    if (!unnamed_socket(files[file].path)) return file;
    SocketKind kind;
    if (auto it = socket_kinds.find(file); it != socket_kinds.end()) kind = it->second;
    // A stream socket's destination (TCP fast open) makes a connection,
    // which its Connect-less sends do not name here. A seqpacket one
    // (SCTP's one-to-many style) sends to destinations as a datagram one.
    if (kind.type == kStream) return file;
    // Without a Socket event: a destination per call is a datagram
    // socket's way (a raw socket's too, which needs privileges).
    if (kind.type == 0) kind.type = kDatagram;
    const std::string destination = destination_name(address, kind);
    const uint32_t named = rename_socket(table, fd, destination + std::string(kSendto), c);
    SentTo& row = sent_to[named];
    if (row.destinations.empty()) row.kind = kind;
    row.destinations.insert(destination);
    return named;
  }

  // A datagram socket that sent to its peer before connecting to it: the
  // row its sends named ("... (sendto)") is the connected row's too, when
  // that peer is the only destination it has.
  void fold_sends_to_peer(uint32_t sends, uint32_t connected, std::span<const uint8_t> peer) {
    auto it = sent_to.find(sends);
    if (sends == connected || it == sent_to.end() || !files[sends].path.ends_with(kSendto)) return;
    const auto& destinations = it->second.destinations;
    if (destinations.size() == 1 && *destinations.begin() == destination_name(peer, it->second.kind))
      folded_into[sends] = connected;
  }

  // A row named by its first destination tells how many others it had.
  void name_destination_counts() {
    for (const auto& [file, row] : sent_to) {
      if (row.destinations.size() < 2 || folded_into[file] != kNone) continue;
      std::string& path = files[file].path;
      if (!path.ends_with(kSendto)) continue;
      const size_t more = row.destinations.size() - 1;
      path.resize(path.size() - kSendto.size());
      path += " (sendto, +" + std::to_string(more) + (more == 1 ? " more destination)" : " more destinations)");
    }
  }

  // A pipe's writers and readers by program name (IoFile::writers).
  void name_pipe_ends(const TraceModel& model) {
    auto program = [&model](ImageIndex i) {
      const Image& image = model.images[i];
      if (!image.command_line.empty()) return base_name(image.command_line.front());
      if (!image.exe.empty()) return base_name(image.exe);
      return model.processes[image.process].name;
    };
    auto names = [&](const std::vector<ImageIndex>& images, std::vector<std::string>& out) {
      for (const ImageIndex i : images) {
        if (i >= model.images.size()) continue;
        std::string name = program(i);
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
      }
    };
    for (const auto& [file, ends] : pipe_ends) {
      names(ends.writers, files[file].writers);
      names(ends.readers, files[file].readers);
    }
  }

  // Merges the folded rows into theirs, keeping first-use order.
  void fold() {
    std::vector<uint32_t> index(files.size(), kNone);
    std::vector<IoFile> kept;
    for (uint32_t f = 0; f < files.size(); ++f) {
      if (folded_into[f] != kNone) continue;
      index[f] = static_cast<uint32_t>(kept.size());
      kept.push_back(std::move(files[f]));
    }
    for (uint32_t f = 0; f < files.size(); ++f) {
      if (folded_into[f] == kNone) continue;
      IoFile& into = kept[index[live(f)]];
      add_totals(into.totals, files[f].totals);
      for (uint32_t pid : files[f].pids)
        if (std::find(into.pids.begin(), into.pids.end(), pid) == into.pids.end()) into.pids.push_back(pid);
    }
    for (uint32_t f = 0; f < files.size(); ++f) index[f] = index[live(f)];
    decltype(slowest) remapped;
    while (!slowest.empty()) {
      IoOperation op = slowest.top();
      slowest.pop();
      op.file = index[op.file];
      remapped.push(std::move(op));
    }
    slowest = std::move(remapped);
    files = std::move(kept);
    folded_into.assign(files.size(), kNone);
    file_by_path.clear();
    for (uint32_t f = 0; f < files.size(); ++f) file_by_path[files[f].path] = f;
  }

  FdTable& fds(const EventContext& c) {
    const ProcessInfo& p = c.model->processes[c.process];
    return fds_of(p.pid, p.ppid);
  }

  // A fork child starts with its parent's descriptors: copied at the
  // parent's Fork event, or at the child's first event when that comes
  // first (the parent has then done nothing since the fork).
  FdTable& fds_of(uint32_t pid, uint32_t ppid) {
    auto [it, inserted] = fds_by_pid.try_emplace(pid);
    if (inserted) {
      auto parent = fds_by_pid.find(ppid);
      if (parent != fds_by_pid.end()) it->second = parent->second;
    }
    return it->second;
  }

  uint32_t file_of_fd(FdTable& table, int32_t fd, const EventContext& c) {
    auto it = table.find(fd);
    if (it != table.end()) return live(it->second);
    const uint32_t file = file_named(unknown_fd_name(fd, c.model->processes[c.process].pid));
    if (fd >= 0) table[fd] = file;
    return file;
  }

  // The row of a call on a descriptor or a stream: a stream with no
  // descriptor (fd -1) that FMemOpen named is its memory stream's row.
  // The file a request flagged IOSQE_FIXED_FILE names by its index in its
  // ring's registered files; a row of its own when the trace does not have
  // the registration.
  uint32_t registered_file(uint32_t pid, int32_t ring, int32_t index) {
    const auto it = registered_files.find({pid, ring});
    if (it != registered_files.end() && index >= 0 && static_cast<size_t>(index) < it->second.size() &&
        it->second[index] != kNone)
      return live(it->second[index]);
    return file_named("io_uring registered file " + std::to_string(index) + " (ring fd " + std::to_string(ring) +
                      ", pid " + std::to_string(pid) + ")");
  }

  uint32_t file_of_call(const reader::Event& e, const EventContext& c) {
    const KnownEvent& k = *c.known;
    const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
    if (fd < 0 && has_field(k, f::kIoStream)) {
      const auto streams = memory_streams_by_pid.find(e.pid);
      if (streams != memory_streams_by_pid.end()) {
        const auto it = streams->second.find(field_u64(e, k, f::kIoStream));
        if (it != streams->second.end()) return live(it->second);
      }
    }
    return file_of_fd(fds(c), fd, c);
  }

  IoTotals& thread_totals(ThreadIndex t) {
    if (t >= thread_slot.size()) thread_slot.resize(t + 1, kNone);
    if (thread_slot[t] == kNone) {
      thread_slot[t] = static_cast<uint32_t>(threads.size());
      threads.emplace_back();
      threads.back().thread = t;
    }
    return threads[thread_slot[t]].totals;
  }

  // `failed`: the call counts as an error (result < 0, but for a connect
  // under way). calls: more than 1 for a run (FPutcRun, FGetcRun,
  // FWriteRun, FReadRun).
  static void add(IoTotals& t, Counted what, int64_t result, int64_t ns, bool failed, uint64_t calls) {
    t.total_ns += ns;
    switch (what) {
      case Counted::open: t.opens++; break;
      case Counted::read:
        t.reads += calls;
        t.read_ns += ns;
        if (result > 0) t.bytes_read += static_cast<uint64_t>(result);
        break;
      case Counted::write:
        t.writes += calls;
        t.write_ns += ns;
        if (result > 0) t.bytes_written += static_cast<uint64_t>(result);
        break;
      case Counted::other: t.other++; break;
    }
    if (failed) t.errors++;
  }

  // The bytes of a call whose time is counted elsewhere (Copy's read side).
  void count_untimed(const reader::Event& e, const EventContext& c, uint32_t file, Counted what, int64_t result) {
    count(e, c, file, what, result, false);
  }

  // timed: the call's time counts, its span (start_ticks to the record, or
  // to end_ticks) unless the event says how long its calls took
  // (busy_ticks: a run of block or line calls, FWriteRun, FReadRun). A run
  // of character calls (FPutcRun, FGetcRun: calls, no busy_ticks) knows no
  // time inside its calls, its span holds the program's between them: its
  // calls and bytes count, its time does not (but for a failed call's run
  // of one, whose span is that call). Only a single call is a candidate for
  // the slowest ones; a run is many short calls (the slow ones are never in
  // one).
  void count(const reader::Event& e, const EventContext& c, uint32_t file, Counted what, int64_t result,
             bool timed = true, bool failed_if_negative = true) {
    const bool failed = failed_if_negative && result < 0;
    const KnownEvent& k = *c.known;
    if (has_field(k, f::kIoCalls) && !has_field(k, f::kIoBusyTicks) && !failed) timed = false;
    int64_t ns = 0;
    // A run ends at its end_ticks; it was written later.
    const int64_t end_ns = has_field(k, f::kIoEndTicks) ? clock.to_ns(field_u64(e, k, f::kIoEndTicks)) : e.time_ns;
    const bool busy = has_field(k, f::kIoBusyTicks);
    if (timed && busy) {
      const uint64_t start = field_u64(e, k, f::kIoStartTicks);
      ns = std::max<int64_t>(0, clock.to_ns(start + field_u64(e, k, f::kIoBusyTicks)) - clock.to_ns(start));
    } else if (timed && has_field(k, f::kIoStartTicks)) {
      ns = std::max<int64_t>(0, end_ns - clock.to_ns(field_u64(e, k, f::kIoStartTicks)));
    }
    const uint64_t calls = has_field(k, f::kIoCalls) ? field_u64(e, k, f::kIoCalls) : 1;
    IoFile& io_file = files[file];
    if ((what == Counted::read || what == Counted::write) && io_file.path.starts_with(kPipePrefix)) {
      PipeEnds& ends = pipe_ends[file];
      std::vector<ImageIndex>& side = what == Counted::read ? ends.readers : ends.writers;
      if (std::find(side.begin(), side.end(), c.image) == side.end()) side.push_back(c.image);
    }
    add(io_file.totals, what, result, ns, failed, calls);
    const uint32_t pid = c.model->processes[c.process].pid;
    if (std::find(io_file.pids.begin(), io_file.pids.end(), pid) == io_file.pids.end()) io_file.pids.push_back(pid);
    add(thread_totals(c.thread), what, result, ns, failed, calls);
    add(totals, what, result, ns, failed, calls);
    if ((what == Counted::read || what == Counted::write) && result > 0) {
      if (!over_time) over_time.emplace(end_ns);
      BytesColumn& column = over_time->at(end_ns);
      (what == Counted::read ? column.read : column.written) += static_cast<uint64_t>(result);
    }
    if (keep_slowest == 0 || !timed || busy || calls != 1) return;
    if (slowest.size() == keep_slowest && slowest.top().duration_ns >= ns) return;
    IoOperation op;
    op.call = e.descriptor->name;
    op.file = file;
    op.thread = c.thread;
    op.start_ns = end_ns - ns;
    op.duration_ns = ns;
    op.result = result;
    slowest.push(std::move(op));
    if (slowest.size() > keep_slowest) slowest.pop();
  }

  void on_event(const reader::Event& e, const EventContext& c) {
    const KnownEvent& k = *c.known;
    switch (k.kind) {
      case EventKind::io_open:
      case EventKind::io_fopen: {
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const auto dirfd = static_cast<int32_t>(field_i64(e, k, f::kIoDirfd, kAtFdcwd));
        const uint32_t file = file_named(absolute_path(field_str(e, k, f::kIoPath), dirfd, c));
        if (fd >= 0) fds(c)[fd] = file;
        if (k.kind == EventKind::io_fopen && fd >= 0)
          stream_fds_by_pid[e.pid][field_u64(e, k, f::kIoStream)] = fd;
        count(e, c, file, Counted::open, fd);
        return;
      }
      case EventKind::io_fdopen: {
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const uint32_t file = file_of_fd(fds(c), fd, c);
        stream_fds_by_pid[e.pid][field_u64(e, k, f::kIoStream)] = fd;
        count(e, c, file, Counted::open, field_i64(e, k, f::kIoResult));
        return;
      }
      case EventKind::io_freopen: {
        FdTable& table = fds(c);
        auto& streams = stream_fds_by_pid[e.pid];
        const uint64_t old_stream = field_u64(e, k, f::kIoOldStream);
        uint32_t file = kNone;
        if (auto it = streams.find(old_stream); it != streams.end()) {
          file = file_of_fd(table, it->second, c);
          table.erase(it->second);
          streams.erase(it);
        }
        const std::string path = absolute_path(field_str(e, k, f::kIoPath), kAtFdcwd, c);
        if (!path.empty() || file == kNone) file = file_named(path.empty() ? "(reopened stream)" : path);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        if (fd >= 0) {
          table[fd] = file;
          streams[field_u64(e, k, f::kIoStream)] = fd;
        }
        count(e, c, file, Counted::open, fd);
        return;
      }
      case EventKind::io_fmemopen: {
        // The stream's calls count in its function's row.
        const uint32_t file = file_named(memory_stream_row(field_u64(e, k, f::kIoCall)));
        const int64_t result = field_i64(e, k, f::kIoResult);
        const uint64_t stream = field_u64(e, k, f::kIoStream);
        if (result == 0 && stream != 0) memory_streams_by_pid[e.pid][stream] = file;
        count(e, c, file, Counted::open, result);
        return;
      }
      case EventKind::io_close:
      case EventKind::io_fclose: {
        FdTable& table = fds(c);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const uint32_t file = file_of_call(e, c);
        table.erase(fd);
        if (k.kind == EventKind::io_fclose) {
          stream_fds_by_pid[e.pid].erase(field_u64(e, k, f::kIoStream));
          if (fd < 0) memory_streams_by_pid[e.pid].erase(field_u64(e, k, f::kIoStream));
        }
        count(e, c, file, Counted::other, field_i64(e, k, f::kIoResult));
        return;
      }
      case EventKind::io_dup: {
        FdTable& table = fds(c);
        const uint32_t file = file_of_fd(table, static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1)), c);
        const int64_t result = field_i64(e, k, f::kIoResult, -1);
        if (result >= 0) table[static_cast<int32_t>(result)] = file;
        count(e, c, file, Counted::other, result);
        return;
      }
      case EventKind::io_read:
      case EventKind::io_fread:
      case EventKind::io_write:
      case EventKind::io_fwrite:
      case EventKind::io_fgetc_run:
      case EventKind::io_fputc_run:
      case EventKind::io_fread_run:
      case EventKind::io_fwrite_run: {
        const uint32_t file = file_of_call(e, c);
        const bool read = k.kind == EventKind::io_read || k.kind == EventKind::io_fread ||
                          k.kind == EventKind::io_fgetc_run || k.kind == EventKind::io_fread_run;
        count(e, c, file, read ? Counted::read : Counted::write, field_i64(e, k, f::kIoResult));
        return;
      }
      case EventKind::io_aio_submit:
      case EventKind::io_aio_return: {
        // A request's bytes count when the program collects its result
        // (AioReturn), as a read or a write of the file it was handed
        // over for; a request refused at once counts then, as one error.
        // The calls' own time is what counts, not the request's (the
        // program went on meanwhile). A collected request keeps the row of
        // its submission: its descriptor may be closed (or reused) since,
        // and looking it up then would name a row for nothing.
        const int64_t result = field_i64(e, k, f::kIoResult);
        const uint64_t block = field_u64(e, k, f::kIoAiocb);
        auto& requests = aio_requests_by_pid[e.pid];
        ++(k.kind == EventKind::io_aio_submit ? aio.requests : aio.results);
        if (k.kind == EventKind::io_aio_submit) {
          constexpr uint64_t kRead = 0, kWrite = 1;  // io_provider.h: kIoAioRead, kIoAioWrite
          const uint64_t call = field_u64(e, k, f::kIoCall);
          const Counted what = call == kRead ? Counted::read : (call == kWrite ? Counted::write : Counted::other);
          const uint32_t file = file_of_call(e, c);
          if (result < 0) count(e, c, file, what, result);
          else if (!requests.insert_or_assign(block, AioRequest{what, file}).second)
            ++aio_replaced;  // the block handed over again: its last request's result was not collected
          return;
        }
        const auto it = requests.find(block);
        if (it == requests.end()) {  // handed over before the trace began
          // A result read from Linux AIO's ring names no descriptor: no row.
          if (field_i64(e, k, f::kIoFd, -1) >= 0) count(e, c, file_of_call(e, c), Counted::other, result);
          return;
        }
        count(e, c, live(it->second.file), it->second.what, result);
        requests.erase(it);
        return;
      }
      case EventKind::io_uring_submit: {
        // Like an AIO request: the bytes count when its completion is
        // found, as the file's it was handed over for (a registered
        // file's index names a row of its own).
        ++uring.requests;
        const auto ring = static_cast<int32_t>(field_i64(e, k, f::kIoRing, -1));
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const uint32_t file = (field_u64(e, k, f::kIoFlags) & IOSQE_FIXED_FILE) != 0
                                  ? registered_file(e.pid, ring, fd)
                                  : file_of_call(e, c);
        uring_requests[{e.pid, ring, field_u64(e, k, f::kIoUserData)}].push_back(
            AioRequest{uring_counted(field_u64(e, k, f::kIoCall)), file});
        return;
      }
      case EventKind::io_uring_complete: {
        ++uring.completions;
        const auto ring = static_cast<int32_t>(field_i64(e, k, f::kIoRing, -1));
        const int64_t result = field_i64(e, k, f::kIoResult);
        const auto it = uring_requests.find({e.pid, ring, field_u64(e, k, f::kIoUserData)});
        if (it == uring_requests.end() || it->second.empty()) {  // a hand-over the trace does not have
          ++uring.unmatched;
          count(e, c, file_named("io_uring ring fd " + std::to_string(ring) + " (pid " + std::to_string(e.pid) + ")"),
                Counted::other, result);
          return;
        }
        const AioRequest request = it->second.front();
        // A multishot request (IORING_CQE_F_MORE) goes on after this one.
        if ((field_u64(e, k, f::kIoFlags) & IORING_CQE_F_MORE) == 0) {
          it->second.pop_front();
          if (it->second.empty()) uring_requests.erase(it);
        }
        count(e, c, live(request.file), request.what, result);
        return;
      }
      case EventKind::io_uring_files: {
        // The ring's table as the call left it: each descriptor named as
        // it is now (a registered file stays open in the ring whatever
        // the program does with its descriptor afterwards).
        auto& table = registered_files[{e.pid, static_cast<int32_t>(field_i64(e, k, f::kIoRing, -1))}];
        const uint64_t call = field_u64(e, k, f::kIoCall);
        constexpr uint64_t kUpdate = 1;  // io_provider.h: kIoUringFilesUpdate
        if (call != kUpdate) table.clear();
        const std::span<const uint8_t> descriptors = field_blob(e, k, f::kIoFds);
        const uint64_t first = field_u64(e, k, f::kIoFirst);
        constexpr uint64_t kMaxFiles = 1 << 20;  // the kernel's own limit on a ring's table
        for (size_t i = 0; i + sizeof(int32_t) <= descriptors.size() && first + i / sizeof(int32_t) < kMaxFiles;
             i += sizeof(int32_t)) {
          int32_t fd;
          std::memcpy(&fd, descriptors.data() + i, sizeof fd);
          const size_t index = first + i / sizeof(int32_t);
          if (table.size() <= index) table.resize(index + 1, kNone);
          table[index] = fd >= 0 ? file_of_fd(fds(c), fd, c) : kNone;
        }
        return;
      }
      case EventKind::io_uring_unseen:
        uring.unseen += field_u64(e, k, f::kIoCalls);
        return;
      case EventKind::io_fd_inherited: {
        // What the process had when the shim attached. A descriptor the
        // trace already follows (kept across an exec, copied by a fork)
        // keeps its file; the others are named by their link.
        // A link that is no path (a pipe, a socket) names the object
        // itself, and wins over what the trace followed: that may be
        // stale when the parent reused the number before the child's
        // first event.
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const std::string_view link = field_str(e, k, f::kIoPath);
        FdTable& table = fds(c);
        const bool authoritative = !link.empty() && link.front() != '/';
        if (fd >= 0 && (authoritative || table.find(fd) == table.end()))
          table[fd] = file_named(described_fd_name(fd, link, e.pid));
        return;
      }
      case EventKind::io_fd_created: {
        // pipe, socket, eventfd...: the new descriptor is named by its link,
        // and the call counts as its file's open.
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const uint32_t file = file_named(described_fd_name(fd, field_str(e, k, f::kIoPath), e.pid));
        if (fd >= 0) fds(c)[fd] = file;
        count(e, c, file, Counted::open, fd);
        return;
      }
      case EventKind::io_close_range: {
        const int64_t result = field_i64(e, k, f::kIoResult);
        const auto first = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const uint64_t last = field_u64(e, k, f::kIoLast);
        constexpr int64_t kCloexecOnly = 1u << 2;  // CLOSE_RANGE_CLOEXEC
        FdTable& table = fds(c);
        if (result == 0 && (field_i64(e, k, f::kIoFlags) & kCloexecOnly) == 0)
          std::erase_if(table, [&](const auto& entry) {
            return entry.first >= first && static_cast<uint64_t>(entry.first) <= last;
          });
        count(e, c, file_named("(descriptors closed by range)"), Counted::other, result);
        return;
      }
      case EventKind::io_copy: {
        // The bytes left one descriptor and reached the other: a read of
        // the first (not for tee, which copies without consuming) and a
        // write of the second. The call's time is counted once, with the
        // write; a failed call is one error, also the write's.
        FdTable& table = fds(c);
        const uint32_t from = file_of_fd(table, static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1)), c);
        const uint32_t to = file_of_fd(table, static_cast<int32_t>(field_i64(e, k, f::kIoTarget, -1)), c);
        const int64_t result = field_i64(e, k, f::kIoResult);
        constexpr uint64_t kTee = 2;  // io_provider.h: kIoCopyTee
        if (field_u64(e, k, f::kIoCall) != kTee && result >= 0) count_untimed(e, c, from, Counted::read, result);
        count(e, c, to, Counted::write, result);
        return;
      }
      case EventKind::io_send:
      case EventKind::io_receive: {
        FdTable& table = fds(c);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const int64_t result = field_i64(e, k, f::kIoResult);
        const bool read = k.kind == EventKind::io_receive;
        const std::span<const uint8_t> address = field_blob(e, k, f::kIoAddress);
        const uint32_t file = !read && result >= 0 && names_an_endpoint(address)
                                  ? name_by_destination(table, fd, address, c)
                                  : file_of_fd(table, fd, c);
        count(e, c, file, read ? Counted::read : Counted::write, result);
        return;
      }
      case EventKind::io_socket: {
        // What the socket is, for a name its sends may give it later; it
        // follows the socket's row (its FdCreated came first) through
        // dups and forks. Not a call of its own: not counted.
        const uint32_t file = file_of_fd(fds(c), static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1)), c);
        socket_kinds[file] = SocketKind{static_cast<uint8_t>(field_u64(e, k, f::kIoSocketType)),
                                        static_cast<int32_t>(field_i64(e, k, f::kIoProtocol))};
        return;
      }
      case EventKind::io_listen: {
        FdTable& table = fds(c);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const int64_t result = field_i64(e, k, f::kIoResult);
        const uint32_t file =
            result == 0 ? name_listener(table, fd, field_blob(e, k, f::kIoAddress),
                                        static_cast<uint8_t>(field_u64(e, k, f::kIoSocketType)), c)
                        : file_of_fd(table, fd, c);
        count(e, c, file, Counted::other, result);
        return;
      }
      case EventKind::io_connect: {
        // Named by the peer once the kernel took the address: also a
        // non-blocking connect still under way (EINPROGRESS, not counted
        // as an error). A refused one counts as an error of the peer's
        // row and leaves the socket's name alone.
        FdTable& table = fds(c);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const std::span<const uint8_t> address = field_blob(e, k, f::kIoAddress);
        const int64_t result = field_i64(e, k, f::kIoResult);
        uint32_t file = kNone;
        if (names_an_endpoint(address)) {
          const std::string name =
              describe_socket_address(address, static_cast<uint8_t>(field_u64(e, k, f::kIoSocketType))) + " (socket)";
          if (result == 0 || result == kInProgress) {
            const uint32_t before = file_of_fd(table, fd, c);
            file = rename_socket(table, fd, name, c);
            fold_sends_to_peer(before, file, address);
          } else {
            file = file_named(name);
          }
        } else {
          file = file_of_fd(table, fd, c);
        }
        count(e, c, file, Counted::other, result, true, result != kInProgress);
        return;
      }
      case EventKind::io_bind: {
        // A socket not yet named by a peer takes its local address,
        // "(bound)" until a Listen makes it a listener (a client binding
        // its source address is renamed by its connect).
        FdTable& table = fds(c);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const std::span<const uint8_t> address = field_blob(e, k, f::kIoAddress);
        const int64_t result = field_i64(e, k, f::kIoResult);
        uint32_t file = file_of_fd(table, fd, c);
        if (result == 0 && unnamed_socket(files[file].path) && names_an_endpoint(address)) {
          const auto type = static_cast<uint8_t>(field_u64(e, k, f::kIoSocketType));
          file = rename_socket(table, fd, describe_socket_address(address, type) + std::string(kBound), c);
        }
        count(e, c, file, Counted::other, result);
        return;
      }
      case EventKind::io_accept: {
        // The wait counts on the listener; the new descriptor (its
        // FdCreated came first) is named by its peer, or, for a peer
        // without an address (a unix client that never bound), by the
        // listener it came through.
        // A listener still "(bound)" is from a trace without Listen
        // events: accepting proves it listens.
        FdTable& table = fds(c);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        const auto type = static_cast<uint8_t>(field_u64(e, k, f::kIoSocketType));
        const int64_t result = field_i64(e, k, f::kIoResult, -1);
        const uint32_t listener = result >= 0 ? name_listener(table, fd, {}, type, c) : file_of_fd(table, fd, c);
        count(e, c, listener, Counted::other, result);
        if (result < 0) return;
        std::string name = describe_socket_address(field_blob(e, k, f::kIoAddress), type);
        const std::string_view listening = files[listener].path;
        if ((name == "unix (unnamed)" || name == "(no address)") && listening.ends_with(kListening))
          name = std::string(listening.substr(0, listening.size() - kListening.size())) + " (accepted)";
        else
          name += " (socket)";
        rename_socket(table, static_cast<int32_t>(result), name, c);
        return;
      }
      case EventKind::io_chdir: {
        // The new directory: getcwd's answer, or what the trace knows of
        // the path or descriptor when the event has none.
        const int64_t result = field_i64(e, k, f::kIoResult);
        const auto fd = static_cast<int32_t>(field_i64(e, k, f::kIoFd, -1));
        std::string dir(field_str(e, k, f::kIoCwd));
        if (dir.empty()) {
          if (fd >= 0) {
            auto& table = fds(c);
            auto it = table.find(fd);
            if (it != table.end()) dir = files[live(it->second)].path;
          } else {
            dir = absolute_path(field_str(e, k, f::kIoPath), kAtFdcwd, c);
          }
        }
        if (result == 0 && !dir.empty() && dir.front() == '/') cwd_by_image[c.image] = dir;
        const std::string_view row = dir.empty() ? std::string_view("(working directory)") : std::string_view(dir);
        count(e, c, file_named(row), Counted::other, result);
        return;
      }
      case EventKind::io_fflush:
        if (field_u64(e, k, f::kIoStream) == 0) {  // fflush(NULL): every output stream
          count(e, c, file_named("(every stdio stream: fflush(NULL))"), Counted::other, field_i64(e, k, f::kIoResult));
          return;
        }
        [[fallthrough]];
      case EventKind::io_seek:
      case EventKind::io_sync: {
        const uint32_t file = file_of_call(e, c);
        count(e, c, file, Counted::other, field_i64(e, k, f::kIoResult));
        return;
      }
      default:
        return;
    }
  }
};

IoAnalysis::IoAnalysis(const reader::Clock& clock, size_t slowest) : state_(std::make_unique<State>()) {
  state_->clock = clock;
  state_->keep_slowest = slowest;
}
IoAnalysis::IoAnalysis(IoAnalysis&&) noexcept = default;
IoAnalysis& IoAnalysis::operator=(IoAnalysis&&) noexcept = default;
IoAnalysis::~IoAnalysis() = default;

bool IoAnalysis::wants(EventKind kind) const {
  return kind == EventKind::process_fork || (kind >= EventKind::io_open && kind <= EventKind::io_chdir);
}

void IoAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  if (c.known->kind == EventKind::process_fork) {
    const auto child = static_cast<uint32_t>(field_u64(e, *c.known, f::kChildPid));
    const uint32_t parent = c.model->processes[c.process].pid;
    if (child != 0 && state_->fds_by_pid.count(parent) != 0) state_->fds_of(child, parent);
    return;
  }
  if (c.known->kind < EventKind::io_open || c.known->kind > EventKind::io_chdir) return;
  state_->on_event(e, c);
}

void IoAnalysis::on_end(const TraceModel& model) {
  state_->uring.uncollected = 0;
  for (const auto& [key, requests] : state_->uring_requests) state_->uring.uncollected += requests.size();
  state_->aio.uncollected = state_->aio_replaced;
  for (const auto& [pid, requests] : state_->aio_requests_by_pid) state_->aio.uncollected += requests.size();
  state_->name_pipe_ends(model);
  state_->name_destination_counts();
  state_->fold();
  if (state_->over_time) {
    // Fitted to no later end than the latest call: the last column holds it.
    const TimeColumns<State::BytesColumn> fitted = state_->over_time->fitted_to(state_->over_time->start_ns());
    IoTimeline& t = state_->timeline = IoTimeline{};
    t.start_ns = fitted.start_ns();
    t.column_ns = fitted.column_ns();
    for (const State::BytesColumn& c : fitted.columns()) {
      t.read_bytes.push_back(c.read);
      t.written_bytes.push_back(c.written);
    }
  }
}

const std::vector<IoFile>& IoAnalysis::files() const { return state_->files; }
const std::vector<IoThread>& IoAnalysis::threads() const { return state_->threads; }
const IoTotals& IoAnalysis::totals() const { return state_->totals; }
const IoTimeline& IoAnalysis::timeline() const { return state_->timeline; }

const IoUringCounts& IoAnalysis::uring() const { return state_->uring; }

const IoAioCounts& IoAnalysis::aio() const { return state_->aio; }

std::vector<IoOperation> IoAnalysis::slowest() const {
  auto copy = state_->slowest;
  std::vector<IoOperation> out;
  while (!copy.empty()) {
    out.push_back(copy.top());
    copy.pop();
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace spoor::analysis
