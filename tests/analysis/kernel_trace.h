// Spoor.Kernel events written by hand, exactly as the kernel-source
// schema gives them (kernelsrc/: id, name, fields in order), into the
// recorder's stream: every event names its process and thread in pid/tid
// fields. Builds on SpoorTrace (spoor_trace.h).
#ifndef SPOOR_TESTS_ANALYSIS_KERNEL_TRACE_H
#define SPOOR_TESTS_ANALYSIS_KERNEL_TRACE_H

#include <cstring>
#include <string>
#include <vector>

#include "spoor_trace.h"

namespace spoor::testing {

enum KernelKey : uint16_t {
  kKCpuSample = 101, kKContextSwitch, kKPageFault, kKSyscallEnter, kKSyscallExit, kKMmap, kKComm, kKFork, kKExit,
  kKLost, kKSchedSwitch, kKSchedWaking, kKBlockRequest, kKSession, kKBlockDevice, kKKernelSymbol,
};

inline Bytes u64_bytes(const std::vector<uint64_t>& v) {
  Bytes b(v.size() * 8);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

class KernelTrace : public SpoorTrace {
 public:
  // The recorder (pid `recorder`, "spoor record") with Spoor.Kernel described.
  explicit KernelTrace(uint32_t recorder = 1) : recorder_(recorder) {
    process(recorder, 0, "spoor", {"spoor", "record"});
    using namespace format;
    builder().provider(recorder, 7, "Spoor.Kernel", guid_from_seed(0xa0));
    auto ev = [&](uint16_t key, const char* name, std::vector<FieldSpec> fields, uint8_t opcode = 0) {
      builder().event({.pid = recorder, .key = key, .provider_index = 7, .id = static_cast<uint16_t>(key - 100),
                       .opcode = opcode, .name = name, .fields = std::move(fields)});
    };
    ev(kKCpuSample, "CpuSample",
       {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldU32, "cpu"}, {kFieldU64, "ip"}, {kFieldU32, "regs_abi"},
        {kFieldU64, "regs_mask"}, {kFieldBlob, "regs"}, {kFieldBlob, "stack"}, {kFieldBlob, "callchain"},
        {kFieldBlob, "kernel_callchain"}, {kFieldBlob, "stack_2"}, {kFieldBlob, "stack_3"}, {kFieldBlob, "stack_4"}});
    ev(kKContextSwitch, "ContextSwitch",
       {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldU32, "cpu"}, {kFieldBool, "out"}, {kFieldBool, "preempted"}});
    ev(kKPageFault, "PageFault",
       {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldU32, "cpu"}, {kFieldU64, "address"}, {kFieldU64, "ip"},
        {kFieldBool, "major"}, {kFieldBlob, "callchain"}});
    ev(kKSyscallEnter, "SyscallEnter",
       {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldU32, "cpu"}, {kFieldU32, "nr"}, {kFieldString, "name"},
        {kFieldBlob, "args"}}, kOpStart);
    ev(kKSyscallExit, "SyscallExit",
       {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldU32, "cpu"}, {kFieldU32, "nr"}, {kFieldString, "name"},
        {kFieldI64, "ret"}}, kOpStop);
    ev(kKMmap, "Mmap",
       {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldU64, "start"}, {kFieldU64, "length"}, {kFieldU64, "pgoff"},
        {kFieldU32, "prot"}, {kFieldU32, "flags"}, {kFieldString, "path"}, {kFieldBlob, "build_id"}});
    ev(kKComm, "Comm", {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldString, "comm"}, {kFieldBool, "exec"}});
    ev(kKFork, "Fork", {{kFieldU32, "pid"}, {kFieldU32, "tid"}, {kFieldU32, "parent_pid"}, {kFieldU32, "parent_tid"}});
    ev(kKExit, "Exit", {{kFieldU32, "pid"}, {kFieldU32, "tid"}});
    ev(kKLost, "Lost", {{kFieldU32, "cpu"}, {kFieldString, "source"}, {kFieldU64, "count"}});
    ev(kKSchedSwitch, "SchedSwitch",
       {{kFieldU32, "cpu"}, {kFieldU32, "prev_pid"}, {kFieldString, "prev_comm"}, {kFieldU64, "prev_state"},
        {kFieldU32, "next_pid"}, {kFieldString, "next_comm"}});
    ev(kKSchedWaking, "SchedWaking",
       {{kFieldU32, "cpu"}, {kFieldU32, "waker_pid"}, {kFieldU32, "pid"}, {kFieldString, "comm"},
        {kFieldU32, "target_cpu"}, {kFieldBool, "irq"}});
    ev(kKBlockRequest, "BlockRequest",
       {{kFieldU32, "cpu"}, {kFieldU32, "pid"}, {kFieldU32, "dev"}, {kFieldU64, "sector"}, {kFieldU32, "bytes"},
        {kFieldString, "rwbs"}, {kFieldBool, "issue"}});
    ev(kKSession, "Session", {{kFieldU32, "sample_hz"}, {kFieldString, "sample_event"}, {kFieldString, "sources"}});
    ev(kKBlockDevice, "BlockDevice", {{kFieldU32, "dev"}, {kFieldString, "name"}});
    ev(kKKernelSymbol, "KernelSymbol", {{kFieldU64, "address"}, {kFieldString, "name"}, {kFieldString, "module"}});
  }

  // A sample with registers (perf layout, `mask`) and a stack copy, or
  // with only the kernel's callchain (empty regs); `more`: the copy's
  // continuation fields stack_2.. (at most 3), as the recorder splits a
  // copy longer than one Blob.
  void cpu_sample(uint32_t pid, uint32_t tid, uint64_t t, uint64_t ip, uint64_t mask, const std::vector<uint64_t>& regs,
                  const Bytes& stack, const std::vector<uint64_t>& callchain, const std::vector<Bytes>& more = {},
                  const std::vector<uint64_t>& kernel_callchain = {}) {
    RecordBuilder r = K(kKCpuSample, t).u32(pid).u32(tid).u32(0).u64(ip).u32(regs.empty() ? 0 : 2).u64(mask)
                          .blob(u64_bytes(regs)).blob(stack).blob(u64_bytes(callchain)).blob(u64_bytes(kernel_callchain));
    for (size_t i = 0; i < 3; ++i) r.blob(i < more.size() ? more[i] : Bytes{});
    kadd(t, r);
  }
  void context_switch(uint32_t pid, uint32_t tid, uint64_t t, bool out, bool preempted) {
    kadd(t, K(kKContextSwitch, t).u32(pid).u32(tid).u32(0).boolean(out).boolean(preempted));
  }
  // callchain: the user-space frames perf gave, innermost first.
  void page_fault(uint32_t pid, uint32_t tid, uint64_t t, uint64_t address, uint64_t ip, bool major,
                  const std::vector<uint64_t>& callchain = {}) {
    Bytes chain(callchain.size() * 8);
    for (size_t i = 0; i < callchain.size(); ++i)
      for (int b = 0; b < 8; ++b) chain[i * 8 + b] = static_cast<uint8_t>(callchain[i] >> (8 * b));
    kadd(t, K(kKPageFault, t).u32(pid).u32(tid).u32(0).u64(address).u64(ip).boolean(major).blob(chain));
  }
  void syscall(uint32_t pid, uint32_t tid, uint64_t enter, uint64_t exit, uint32_t nr, const std::string& name,
               int64_t ret) {
    syscall_enter(pid, tid, enter, nr, name);
    syscall_exit(pid, tid, exit, nr, name, ret);
  }
  void syscall_enter(uint32_t pid, uint32_t tid, uint64_t t, uint32_t nr, const std::string& name,
                     const std::vector<uint64_t>& args = {}) {
    Bytes raw(48, 0);
    for (size_t i = 0; i < args.size() && i < 6; ++i) std::memcpy(raw.data() + 8 * i, &args[i], 8);
    kadd(t, K(kKSyscallEnter, t).u32(pid).u32(tid).u32(0).u32(nr).string(name).blob(raw));
  }
  void syscall_exit(uint32_t pid, uint32_t tid, uint64_t t, uint32_t nr, const std::string& name, int64_t ret) {
    kadd(t, K(kKSyscallExit, t).u32(pid).u32(tid).u32(0).u32(nr).string(name).i64(ret));
  }
  void mmap(uint32_t pid, uint64_t t, uint64_t start, uint64_t length, uint64_t pgoff, uint32_t prot,
            const std::string& path, const Bytes& build_id = {}) {
    kadd(t, K(kKMmap, t).u32(pid).u32(pid).u64(start).u64(length).u64(pgoff).u32(prot).u32(2).string(path)
                .blob(build_id));
  }
  void comm(uint32_t pid, uint32_t tid, uint64_t t, const std::string& comm, bool exec) {
    kadd(t, K(kKComm, t).u32(pid).u32(tid).string(comm).boolean(exec));
  }
  void kfork(uint32_t pid, uint32_t tid, uint64_t t, uint32_t parent_pid, uint32_t parent_tid) {
    kadd(t, K(kKFork, t).u32(pid).u32(tid).u32(parent_pid).u32(parent_tid));
  }
  void kexit(uint32_t pid, uint32_t tid, uint64_t t) { kadd(t, K(kKExit, t).u32(pid).u32(tid)); }
  void klost(uint64_t t, const std::string& source, uint64_t count) {
    kadd(t, K(kKLost, t).u32(0).string(source).u64(count));
  }
  // prev_state: the kernel's TASK_REPORT bits (0x1 S, 0x2 D, 0x100 preempted).
  void sched_switch(uint64_t t, uint32_t cpu, uint32_t prev, const std::string& prev_comm, uint64_t prev_state,
                    uint32_t next, const std::string& next_comm) {
    kadd(t, K(kKSchedSwitch, t).u32(cpu).u32(prev).string(prev_comm).u64(prev_state).u32(next).string(next_comm));
  }
  // irq: an interrupt did it (`waker` is the task it hit).
  void sched_waking(uint64_t t, uint32_t cpu, uint32_t waker, uint32_t woken, const std::string& comm,
                    bool irq = false) {
    kadd(t, K(kKSchedWaking, t).u32(cpu).u32(waker).u32(woken).string(comm).u32(cpu).boolean(irq));
  }
  void block_request(uint64_t t, uint32_t tid, uint32_t dev, uint64_t sector, uint32_t bytes, const std::string& rwbs,
                     bool issue) {
    kadd(t, K(kKBlockRequest, t).u32(0).u32(tid).u32(dev).u64(sector).u32(bytes).string(rwbs).boolean(issue));
  }
  void session(uint64_t t, uint32_t hz, const std::string& event, const std::string& sources) {
    kadd(t, K(kKSession, t).u32(hz).string(event).string(sources));
  }
  // dev: major << 20 | minor, as BlockRequest's.
  void block_device(uint64_t t, uint32_t dev, const std::string& name) {
    kadd(t, K(kKBlockDevice, t).u32(dev).string(name));
  }
  void kernel_symbol(uint64_t t, uint64_t address, const std::string& name, const std::string& module = "") {
    kadd(t, K(kKKernelSymbol, t).u64(address).string(name).string(module));
  }

 private:
  RecordBuilder K(uint16_t key, uint64_t t) const { return RecordBuilder(key, t).tid(recorder_); }
  void kadd(uint64_t, const RecordBuilder& r) { add_record(recorder_, r); }
  uint32_t recorder_;
};

}  // namespace spoor::testing

#endif  // SPOOR_TESTS_ANALYSIS_KERNEL_TRACE_H
