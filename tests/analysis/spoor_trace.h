// Traces shaped like spoor record's, written by hand with the test trace
// builder: the recorder's providers and events with the fields the shim
// gives them (preload/process_events.h, preload/shim/*_provider.h), plus a
// program provider "My.App", every record at a chosen tick (ns), so every
// figure an analysis derives from them is known exactly.
#ifndef SPOOR_TESTS_ANALYSIS_SPOOR_TRACE_H
#define SPOOR_TESTS_ANALYSIS_SPOOR_TRACE_H

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "trace_builder.h"

namespace spoor::testing {

enum Key : uint16_t {
  kModuleLoad = 1, kProcessStart, kFork, kProcessExit, kThreadStart, kThreadEnd, kThreadName, kStack,
  kAlloc, kFree, kRealloc, kOpen, kRead, kWrite, kClose, kDup, kSample, kJobStart, kJobStop, kTick,
  kModuleImage, kSamplerStart, kExec, kExecFailed, kFdCreated, kConnect, kChdir, kBind, kListen, kAccept, kSend,
  kReceive, kSocket, kCommandStart, kCommandEnd, kProcessRunning, kShimStarted,
};

class SpoorTrace {
 public:
  SpoorTrace() { t_.clock_ns(); }

  // A process with every provider described; its records go to stream `pid`.
  void process(uint32_t pid, uint32_t ppid, const std::string& comm, const std::vector<std::string>& args) {
    t_.process(pid, comm, args, 8, ppid);
    t_.stream(pid, pid, 0);
    const char* providers[] = {"Spoor.Process", "Spoor.Thread", "Spoor.Stack", "Spoor.Heap",
                               "Spoor.IO",      "Spoor.Samples", "My.App"};
    for (uint16_t i = 0; i < 7; ++i) t_.provider(pid, i, providers[i], guid_from_seed(static_cast<uint8_t>(i * 16)));
    using namespace format;
    auto ev = [&](uint16_t key, uint16_t provider, const char* name, std::vector<FieldSpec> fields, uint8_t opcode = 0) {
      t_.event({.pid = pid, .key = key, .provider_index = provider, .id = key, .opcode = opcode, .name = name,
                .fields = std::move(fields)});
    };
    ev(kModuleLoad, 0, "ModuleLoad",
       {{kFieldPointer, "bias"}, {kFieldPointer, "start"}, {kFieldU64, "size"}, {kFieldString, "path"}, {kFieldBlob, "build_id"}});
    ev(kProcessStart, 0, "ProcessStart", {{kFieldU32, "ppid"}, {kFieldU32, "exec_count"}, {kFieldString, "exe"}, {kFieldString, "cwd"}});
    ev(kFork, 0, "Fork", {{kFieldU32, "child_pid"}, {kFieldBool, "spawn"}});
    ev(kProcessExit, 0, "ProcessExit", {{kFieldU32, "pid"}, {kFieldI32, "exit_code"}, {kFieldU8, "signal"}, {kFieldBool, "core_dumped"}});
    ev(kProcessRunning, 0, "ProcessRunning", {{kFieldU32, "pid"}});
    ev(kShimStarted, 0, "ShimStarted", {{kFieldU64, "duration_ns"}});
    ev(kThreadStart, 1, "ThreadStart", {{kFieldU32, "tid"}, {kFieldU32, "parent_tid"}, {kFieldPointer, "start"}, {kFieldU32, "stack"}}, kOpStart);
    ev(kThreadEnd, 1, "ThreadEnd", {{kFieldU32, "tid"}}, kOpStop);
    ev(kThreadName, 1, "ThreadName", {{kFieldU32, "tid"}, {kFieldString, "name"}});
    ev(kStack, 2, "Stack", {{kFieldU32, "id"}, {kFieldBlob, "frames"}});
    ev(kAlloc, 3, "Alloc", {{kFieldPointer, "ptr"}, {kFieldU64, "size"}, {kFieldU32, "stack"}});
    ev(kFree, 3, "Free", {{kFieldPointer, "ptr"}});
    ev(kRealloc, 3, "Realloc", {{kFieldPointer, "old_ptr"}, {kFieldPointer, "ptr"}, {kFieldU64, "size"}, {kFieldU32, "stack"}});
    ev(kOpen, 4, "Open",
       {{kFieldI32, "dirfd"}, {kFieldString, "path"}, {kFieldI32, "flags"}, {kFieldU32, "mode"}, {kFieldI32, "fd"},
        {kFieldU64, "start_ticks"}, {kFieldU32, "stack"}});
    const std::vector<FieldSpec> transfer = {{kFieldI32, "fd"},    {kFieldI64, "offset"},      {kFieldU32, "vectors"},
                                             {kFieldU64, "requested"}, {kFieldI64, "result"}, {kFieldU64, "start_ticks"},
                                             {kFieldU32, "stack"}};
    ev(kRead, 4, "Read", transfer);
    ev(kWrite, 4, "Write", transfer);
    ev(kClose, 4, "Close", {{kFieldI32, "fd"}, {kFieldI32, "result"}, {kFieldU64, "start_ticks"}});
    ev(kDup, 4, "Dup", {{kFieldI32, "fd"}, {kFieldI32, "target"}, {kFieldI32, "flags"}, {kFieldI32, "result"}, {kFieldU64, "start_ticks"}});
    ev(kFdCreated, 4, "FdCreated", {{kFieldI32, "fd"}, {kFieldString, "path"}, {kFieldU8, "call"}, {kFieldU64, "start_ticks"}});
    ev(kConnect, 4, "Connect",
       {{kFieldI32, "fd"}, {kFieldBlob, "address"}, {kFieldU8, "socket_type"}, {kFieldI32, "result"},
        {kFieldU64, "start_ticks"}, {kFieldU32, "stack"}});
    const std::vector<FieldSpec> naming = {{kFieldI32, "fd"}, {kFieldBlob, "address"}, {kFieldU8, "socket_type"},
                                           {kFieldI32, "result"}, {kFieldU64, "start_ticks"}, {kFieldU32, "stack"}};
    ev(kBind, 4, "Bind", naming);
    ev(kListen, 4, "Listen",
       {{kFieldI32, "fd"}, {kFieldBlob, "address"}, {kFieldU8, "socket_type"}, {kFieldI32, "backlog"},
        {kFieldI32, "result"}, {kFieldU64, "start_ticks"}, {kFieldU32, "stack"}});
    ev(kAccept, 4, "Accept",
       {{kFieldI32, "fd"}, {kFieldBlob, "address"}, {kFieldU8, "socket_type"}, {kFieldU8, "call"},
        {kFieldI32, "result"}, {kFieldU64, "start_ticks"}, {kFieldU32, "stack"}});
    const std::vector<FieldSpec> socket_transfer = {
        {kFieldI32, "fd"},        {kFieldBlob, "address"}, {kFieldU8, "call"},          {kFieldI32, "flags"},
        {kFieldU32, "vectors"},   {kFieldU64, "requested"}, {kFieldI64, "result"}, {kFieldU64, "start_ticks"},
        {kFieldU32, "stack"}};
    ev(kSend, 4, "Send", socket_transfer);
    ev(kReceive, 4, "Receive", socket_transfer);
    ev(kSocket, 4, "Socket",
       {{kFieldI32, "fd"}, {kFieldU16, "domain"}, {kFieldU8, "socket_type"}, {kFieldI32, "protocol"}});
    ev(kChdir, 4, "Chdir",
       {{kFieldI32, "fd"}, {kFieldString, "path"}, {kFieldString, "cwd"}, {kFieldI32, "result"},
        {kFieldU64, "start_ticks"}, {kFieldU32, "stack"}});
    ev(kSample, 5, "Sample", {{kFieldU32, "stack"}, {kFieldU32, "periods"}});
    ev(kJobStart, 6, "JobStart", {{kFieldU32, "job"}}, kOpStart);
    ev(kJobStop, 6, "JobStop", {}, kOpStop);
    ev(kTick, 6, "Tick", {});
    ev(kModuleImage, 0, "ModuleImage",
       {{kFieldPointer, "bias"}, {kFieldString, "path"}, {kFieldU64, "offset"}, {kFieldBlob, "image"}});
    ev(kSamplerStart, 5, "SamplerStart", {{kFieldU32, "hz"}});
    ev(kExec, 0, "Exec", {{kFieldString, "path"}, {kFieldString, "untraceable"}});
    ev(kExecFailed, 0, "ExecFailed", {{kFieldI32, "errno"}});
    ev(kCommandStart, 0, "CommandStart", {{kFieldU32, "call"}, {kFieldString, "command"}}, kOpStart);
    ev(kCommandEnd, 0, "CommandEnd",
       {{kFieldU32, "call"}, {kFieldI32, "exit_code"}, {kFieldU8, "signal"}, {kFieldBool, "core_dumped"}}, kOpStop);
  }

  // The PROCESS block an exec adds (same pid, new command line).
  void exec_block(uint32_t pid, uint32_t ppid, const std::string& comm, const std::vector<std::string>& args) {
    t_.process(pid, comm, args, 8, ppid);
  }

  // --- records (t: ticks, which are ns here) ---
  void module_load(uint32_t pid, uint64_t t, uint64_t bias, uint64_t start, uint64_t size, const std::string& path,
                   const Bytes& build_id = {}) {
    add(pid, R(kModuleLoad, t, pid).pointer(bias).pointer(start).u64(size).string(path).blob(build_id));
  }
  void process_start(uint32_t pid, uint64_t t, uint32_t ppid, uint32_t exec_count, const std::string& exe) {
    add(pid, R(kProcessStart, t, pid).u32(ppid).u32(exec_count).string(exe).string("/work"));
  }
  // spawn: posix_spawn's child (a new image at once), not fork's.
  void fork(uint32_t pid, uint64_t t, uint32_t child, bool spawn = false) {
    add(pid, R(kFork, t, pid).u32(child).boolean(spawn));
  }
  void exec(uint32_t pid, uint64_t t, const std::string& path, const std::string& untraceable) {
    add(pid, R(kExec, t, pid).string(path).string(untraceable));
  }
  void exec_failed(uint32_t pid, uint64_t t, int32_t err) { add(pid, R(kExecFailed, t, pid).i32(err)); }
  // system() or popen() (start) and its result (end), `call` pairing them.
  void command_start(uint32_t pid, uint64_t t, uint32_t call, const std::string& command) {
    add(pid, R(kCommandStart, t, pid).u32(call).string(command));
  }
  void command_end(uint32_t pid, uint64_t t, uint32_t call, int32_t code, uint8_t signal) {
    add(pid, R(kCommandEnd, t, pid).u32(call).i32(code).u8(signal).boolean(false));
  }
  void process_exit(uint32_t writer, uint64_t t, uint32_t pid, int32_t code, uint8_t signal) {
    add(writer, R(kProcessExit, t, writer).u32(pid).i32(code).u8(signal).boolean(false));
  }
  void process_running(uint32_t writer, uint64_t t, uint32_t pid) { add(writer, R(kProcessRunning, t, writer).u32(pid)); }
  // The preloaded library's start on thread `tid`, ending at t.
  void shim_started(uint32_t pid, uint32_t tid, uint64_t t, uint64_t duration_ns) {
    add(pid, R(kShimStarted, t, tid).u64(duration_ns));
  }
  void thread_start(uint32_t pid, uint32_t tid, uint64_t t, uint32_t parent) {
    add(pid, R(kThreadStart, t, tid).u32(tid).u32(parent).pointer(0).u32(0));
  }
  void thread_end(uint32_t pid, uint32_t tid, uint64_t t) { add(pid, R(kThreadEnd, t, tid).u32(tid)); }
  void thread_name(uint32_t pid, uint32_t tid, uint64_t t, const std::string& name) {
    add(pid, R(kThreadName, t, tid).u32(tid).string(name));
  }
  void stack(uint32_t pid, uint64_t t, uint32_t id, const std::vector<uint64_t>& frames) {
    Bytes b;
    for (uint64_t f : frames)
      for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(f >> (8 * i)));
    add(pid, R(kStack, t, pid).u32(id).blob(b));
  }
  void alloc(uint32_t pid, uint64_t t, uint64_t ptr, uint64_t size, uint32_t stack, uint32_t tid = 0) {
    add(pid, R(kAlloc, t, tid ? tid : pid).pointer(ptr).u64(size).u32(stack));
  }
  void free(uint32_t pid, uint64_t t, uint64_t ptr) { add(pid, R(kFree, t, pid).pointer(ptr)); }
  void realloc(uint32_t pid, uint64_t t, uint64_t old_ptr, uint64_t ptr, uint64_t size, uint32_t stack) {
    add(pid, R(kRealloc, t, pid).pointer(old_ptr).pointer(ptr).u64(size).u32(stack));
  }
  // I/O calls that took `ns` and returned at t.
  void open(uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns, const std::string& path, int32_t fd) {
    add(pid, R(kOpen, t, tid).i32(-100).string(path).i32(0).u32(0).i32(fd).u64(t - ns).u32(0));
  }
  // openat: `path` relative to `dirfd` (-100: the working directory).
  void open_at(uint32_t pid, uint32_t tid, uint64_t t, int32_t dirfd, const std::string& path, int32_t fd) {
    add(pid, R(kOpen, t, tid).i32(dirfd).string(path).i32(0).u32(0).i32(fd).u64(t).u32(0));
  }
  // `address`: a raw sockaddr; type: SO_TYPE.
  void connect(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const Bytes& address, uint8_t type,
               int32_t result) {
    add(pid, R(kConnect, t, tid).i32(fd).blob(address).u8(type).i32(result).u64(t).u32(0));
  }
  void bind(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const Bytes& address, uint8_t type,
            int32_t result) {
    add(pid, R(kBind, t, tid).i32(fd).blob(address).u8(type).i32(result).u64(t).u32(0));
  }
  // `address`: the local address (empty when the call failed).
  void listen(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const Bytes& address, uint8_t type,
              int32_t result) {
    add(pid, R(kListen, t, tid).i32(fd).blob(address).u8(type).i32(128).i32(result).u64(t).u32(0));
  }
  // On listener `fd`; result: the new descriptor, `address` its peer's.
  void accept(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const Bytes& address, uint8_t type,
              int32_t result) {
    add(pid, R(kAccept, t, tid).i32(fd).blob(address).u8(type).u8(4).i32(result).u64(t).u32(0));
  }
  // sendto (call 1) with a destination, send (call 0) without.
  void send(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const Bytes& address, int64_t result) {
    add(pid, R(kSend, t, tid).i32(fd).blob(address).u8(address.empty() ? 0 : 1).i32(0).u32(0)
                 .u64(result > 0 ? static_cast<uint64_t>(result) : 0).i64(result).u64(t).u32(0));
  }
  void receive(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const Bytes& address, int64_t result) {
    add(pid, R(kReceive, t, tid).i32(fd).blob(address).u8(address.empty() ? 3 : 4).i32(0).u32(0)
                 .u64(result > 0 ? static_cast<uint64_t>(result) : 0).i64(result).u64(t).u32(0));
  }
  // socket(domain, type, protocol), written after its FdCreated.
  void socket(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, uint16_t domain, uint8_t type, int32_t protocol) {
    add(pid, R(kSocket, t, tid).i32(fd).u16(domain).u8(type).i32(protocol));
  }
  // chdir (fd -1) or fchdir; cwd: the directory after it, "" when the call failed.
  void chdir(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const std::string& path, const std::string& cwd,
             int32_t result) {
    add(pid, R(kChdir, t, tid).i32(fd).string(path).string(cwd).i32(result).u64(t).u32(0));
  }
  void read(uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns, int32_t fd, int64_t result) {
    add(pid, R(kRead, t, tid).i32(fd).i64(-1).u32(0).u64(result > 0 ? static_cast<uint64_t>(result) : 0).i64(result).u64(t - ns).u32(0));
  }
  void write(uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns, int32_t fd, int64_t result) {
    add(pid, R(kWrite, t, tid).i32(fd).i64(-1).u32(0).u64(result > 0 ? static_cast<uint64_t>(result) : 0).i64(result).u64(t - ns).u32(0));
  }
  void close(uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns, int32_t fd) {
    add(pid, R(kClose, t, tid).i32(fd).i32(0).u64(t - ns));
  }
  void dup(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, int32_t result) {
    add(pid, R(kDup, t, tid).i32(fd).i32(-1).i32(0).i32(result).u64(t));
  }
  // pipe(), socketpair()...: one per new descriptor, `path` its /proc link.
  void fd_created(uint32_t pid, uint32_t tid, uint64_t t, int32_t fd, const std::string& path) {
    add(pid, R(kFdCreated, t, tid).i32(fd).string(path).u8(0).u64(t));
  }
  void module_image(uint32_t pid, uint64_t t, uint64_t bias, const std::string& path, uint64_t offset,
                    const Bytes& image) {
    add(pid, R(kModuleImage, t, pid).pointer(bias).string(path).u64(offset).blob(image));
  }
  void sampler_start(uint32_t pid, uint64_t t, uint32_t hz) { add(pid, R(kSamplerStart, t, pid).u32(hz)); }
  void sample(uint32_t pid, uint32_t tid, uint64_t t, uint32_t stack, uint32_t periods) {
    add(pid, R(kSample, t, tid).u32(stack).u32(periods));
  }
  void job_start(uint32_t pid, uint32_t tid, uint64_t t, uint8_t activity) {
    add(pid, R(kJobStart, t, tid).activity(guid_from_seed(activity)).u32(activity));
  }
  void job_stop(uint32_t pid, uint32_t tid, uint64_t t, uint8_t activity) {
    add(pid, R(kJobStop, t, tid).activity(guid_from_seed(activity)));
  }
  void tick(uint32_t pid, uint32_t tid, uint64_t t) { add(pid, R(kTick, t, tid)); }

  // For traces that add providers of their own (kernel_trace.h).
  TraceBuilder& builder() { return t_; }
  void add_record(uint32_t pid, const RecordBuilder& r) { add(pid, r); }

  // Events the stream of `pid` lost (its STREAM_END says so).
  void lost(uint32_t pid, uint64_t n) { lost_[pid] = n; }

  // The file: one packet per process, records in the order added.
  Bytes bytes() {
    TraceBuilder t = t_;
    for (auto& [pid, packet] : packets_) {
      t.packet(packet);
      t.stream_end(pid, lost_[pid], 0, 1);
    }
    return t.bytes();
  }
  // bytes(), written to `path`.
  void save(const std::string& path) {
    const Bytes b = bytes();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }

 private:
  static RecordBuilder R(uint16_t key, uint64_t t, uint32_t tid) { return RecordBuilder(key, t).tid(tid); }
  void add(uint32_t pid, const RecordBuilder& r) {
    auto it = packets_.try_emplace(pid, PacketBuilder(pid, 0, 0)).first;
    it->second.add(r);
  }

  TraceBuilder t_;
  std::map<uint32_t, PacketBuilder> packets_;
  std::map<uint32_t, uint64_t> lost_;
};

}  // namespace spoor::testing

#endif  // SPOOR_TESTS_ANALYSIS_SPOOR_TRACE_H
