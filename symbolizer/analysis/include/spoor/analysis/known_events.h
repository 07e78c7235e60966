// The Spoor.* events the analyses understand, recognized once per event
// descriptor (provider and event name) with their fields' positions, so the
// per-event work is one hash lookup and indexed field reads instead of
// string compares. A field an old or odd trace lacks reads as 0 / "".
#ifndef SPOOR_ANALYSIS_KNOWN_EVENTS_H
#define SPOOR_ANALYSIS_KNOWN_EVENTS_H

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>

#include "spoor/reader/event.h"
#include "spoor/reader/trace.h"

namespace spoor::analysis {

enum class EventKind : uint8_t {
  other,  // an event of the program's own providers, or one the analyses do not read
  // Spoor.Process
  module_load, module_unload, process_start, process_fork, process_exec, process_exec_failed, process_exit, module_image,
  command_start, command_end, process_running, shim_started,
  // Spoor.Thread
  thread_start, thread_end, thread_name,
  // Spoor.Stack
  stack,
  // Spoor.Heap
  heap_alloc, heap_free, heap_realloc, heap_mmap, heap_munmap, heap_mremap, heap_own_allocator,
  // Spoor.IO
  io_open, io_close, io_read, io_write, io_seek, io_sync, io_dup,
  io_fopen, io_fdopen, io_freopen, io_fclose, io_fread, io_fwrite, io_fflush,
  io_fd_inherited, io_close_range, io_copy, io_fputc_run, io_fgetc_run, io_fd_created,
  io_connect, io_bind, io_accept, io_send, io_receive, io_listen, io_socket, io_fwrite_run, io_fread_run,
  io_fmemopen, io_aio_submit, io_aio_return, io_uring_submit, io_uring_complete, io_uring_unseen,
  io_uring_files,
  io_chdir,  // io_chdir: keep last of Spoor.IO
  // Spoor.Samples
  sample, sampler_start, sampler_off,
  // Spoor.Kernel (kernelsrc/: perf_event_open's records, in the recorder's stream)
  kernel_sample, kernel_switch, kernel_fault, kernel_syscall_enter, kernel_syscall_exit, kernel_mmap,
  kernel_comm, kernel_fork, kernel_exit, kernel_lost,
  // Spoor.Kernel, machine-wide (privileged): tasks named by kernel pid (a tid)
  kernel_sched_switch, kernel_sched_waking, kernel_block,
  // Spoor.Kernel: the recording's settings, once; the block devices' names;
  // the kernel functions it saw; the vDSO's image
  kernel_session, kernel_block_device, kernel_symbol, kernel_vdso_image,  // kernel_vdso_image: keep last
};
inline constexpr size_t kEventKindCount = static_cast<size_t>(EventKind::kernel_vdso_image) + 1;

// Field slots: the i-th name of the kind's field list (known_events.cpp),
// e.g. for heap_alloc 0 = ptr, 1 = size, 2 = stack.
inline constexpr size_t kMaxKnownFields = 25;
inline constexpr uint8_t kMissingField = 0xff;

struct KnownEvent {
  EventKind kind = EventKind::other;
  std::array<uint8_t, kMaxKnownFields> slot{};  // index into Event::fields, or kMissingField
  // One of the recorder's providers (Spoor.Process, Spoor.Thread,
  // Spoor.Stack, Spoor.Heap, Spoor.IO, Spoor.Samples), known event or not.
  // Every other provider is the program's own (Spoor.Demo included).
  bool builtin_provider = false;
  // The event names the process and thread it is about in fields (slots
  // field::kKernelPid, kKernelTid) rather than by the stream it sits in:
  // Spoor.Kernel's, which the recorder writes.
  bool names_thread = false;
};

// The field names of each kind, in slot order. Named constants for slots:
namespace field {
// module_load: bias, start, size, path, build_id
inline constexpr int kBias = 0, kStart = 1, kSize = 2, kPath = 3, kBuildId = 4;
// module_unload: bias, path
inline constexpr int kUnloadBias = 0, kUnloadPath = 1;
// process_start: ppid, exec_count, exe, cwd
inline constexpr int kPpid = 0, kExecCount = 1, kExe = 2, kCwd = 3;
// process_fork: child_pid, spawn; process_exec: path, untraceable, cpu_ns; process_exec_failed: errno
inline constexpr int kChildPid = 0, kForkSpawn = 1, kExecPath = 0, kUntraceable = 1, kExecCpuNs = 2, kErrno = 0;
// process_exit: pid, exit_code, signal, core_dumped
inline constexpr int kExitPid = 0, kExitCode = 1, kSignal = 2, kCoreDumped = 3;
// process_running: pid (as process_exit's kExitPid)
// shim_started: duration_ns
inline constexpr int kShimDuration = 0;
// command_start: call, command; command_end: call, exit_code, signal, core_dumped
inline constexpr int kCommandCall = 0, kCommandLine = 1, kCommandExitCode = 1, kCommandSignal = 2, kCommandCore = 3;
// thread_start: tid, parent_tid, start, stack, cpu_ns; thread_end: tid, with_process, cpu_ns; thread_name: tid, name
inline constexpr int kTid = 0, kParentTid = 1, kThreadStack = 3, kThreadStartCpuNs = 4, kThreadName = 1,
                     kWithProcess = 1, kThreadCpuNs = 2;
// stack: id, frames
inline constexpr int kStackId = 0, kFrames = 1;
// heap_own_allocator: path
inline constexpr int kOwnAllocatorPath = 0;
// heap_alloc: ptr, size, stack; heap_free: ptr
inline constexpr int kPtr = 0, kAllocSize = 1, kAllocStack = 2;
// heap_realloc: old_ptr, ptr, size, stack
inline constexpr int kReallocOld = 0, kReallocPtr = 1, kReallocSize = 2, kReallocStack = 3;
// heap_mmap: ptr, size, prot, flags, fd, stack; heap_munmap: ptr, size
inline constexpr int kMmapPtr = 0, kMmapSize = 1, kMmapFd = 4, kMmapStack = 5;
// heap_mremap: old_ptr, old_size, ptr, size, stack
inline constexpr int kMremapOld = 0, kMremapOldSize = 1, kMremapPtr = 2, kMremapSize = 3, kMremapStack = 4;
// Spoor.IO: every kind has these slots (-1 / 0 when the event lacks one):
//   fd, path, result, start_ticks, requested, stack, target, stream, old_stream, flags, last, call,
//   address, socket_type, dirfd, cwd, calls, end_ticks, protocol, busy_ticks, aiocb, ring, user_data,
//   first, fds
inline constexpr int kIoFd = 0, kIoPath = 1, kIoResult = 2, kIoStartTicks = 3, kIoRequested = 4,
                     kIoStack = 5, kIoTarget = 6, kIoStream = 7, kIoOldStream = 8, kIoFlags = 9, kIoLast = 10,
                     kIoCall = 11, kIoAddress = 12, kIoSocketType = 13, kIoDirfd = 14, kIoCwd = 15,
                     kIoCalls = 16, kIoEndTicks = 17, kIoProtocol = 18, kIoBusyTicks = 19,
                     kIoAiocb = 20, kIoRing = 21, kIoUserData = 22, kIoFirst = 23, kIoFds = 24;
// io_fwrite_run, io_fread_run: `call` names the runs' function (kIoStdio*
// in preload/shim/io_provider.h: 0 fwrite, 1 fputs, 2 puts, 3 printf,
// 4 fread, 5 fgets, 6 getline); stdio_run_function() spells it.
std::string_view stdio_run_function(uint64_t call);
// module_image: bias, path, offset, image
inline constexpr int kImageBias = 0, kImagePath = 1, kImageOffset = 2, kImageBytes = 3;
// sample: stack, periods; sampler_start: hz; sampler_off: tracer, tracer_name
inline constexpr int kSampleStack = 0, kPeriods = 1, kSamplerHz = 0, kSamplerOffTracer = 0, kSamplerOffTracerName = 1;
// Spoor.Kernel (every kind but kernel_lost starts with pid, tid):
inline constexpr int kKernelPid = 0, kKernelTid = 1, kKernelCpu = 2;
// kernel_sample: pid, tid, cpu, ip, regs_abi, regs_mask, regs, stack, callchain, kernel_callchain,
// stack_2, stack_3, stack_4 (a copy longer than one Blob goes on in these;
// traces before them have none)
inline constexpr int kKSampleIp = 3, kKRegsAbi = 4, kKRegsMask = 5, kKRegs = 6, kKStack = 7, kKCallchain = 8,
                     kKKernelCallchain = 9, kKStack2 = 10, kKStack3 = 11, kKStack4 = 12;
// kernel_switch: pid, tid, cpu, out, preempted
inline constexpr int kKOut = 3, kKPreempted = 4;
// kernel_fault: pid, tid, cpu, address, ip, major, callchain
inline constexpr int kKFaultAddress = 3, kKFaultIp = 4, kKMajor = 5, kKFaultCallchain = 6;
// kernel_syscall_enter: pid, tid, cpu, nr, name, args; kernel_syscall_exit: pid, tid, cpu, nr, name, ret
inline constexpr int kKNr = 3, kKSyscallName = 4, kKSyscallArgs = 5, kKRet = 5;
// kernel_mmap: pid, tid, start, length, pgoff, prot, flags, path, build_id
inline constexpr int kKMmapStart = 2, kKMmapLength = 3, kKPgoff = 4, kKProt = 5, kKMmapFlags = 6, kKMmapPath = 7,
                     kKMmapBuildId = 8;
// kernel_comm: pid, tid, comm, exec; kernel_fork: pid, tid, parent_pid, parent_tid; kernel_exit: pid, tid
inline constexpr int kKComm = 2, kKExec = 3, kKParentPid = 2, kKParentTid = 3;
// kernel_lost: cpu, source, count
inline constexpr int kKLostCpu = 0, kKLostSource = 1, kKLostCount = 2;
// kernel_sched_switch: cpu, prev_pid, prev_comm, prev_state, next_pid, next_comm
inline constexpr int kKSwCpu = 0, kKPrevPid = 1, kKPrevComm = 2, kKPrevState = 3, kKNextPid = 4, kKNextComm = 5;
// kernel_sched_waking: cpu, waker_pid, pid, comm, target_cpu, irq
inline constexpr int kKWakeCpu = 0, kKWaker = 1, kKWoken = 2, kKWokenComm = 3, kKTargetCpu = 4, kKWakeIrq = 5;
// kernel_block: cpu, pid, dev, sector, bytes, rwbs, issue
inline constexpr int kKBlockCpu = 0, kKBlockPid = 1, kKDev = 2, kKSector = 3, kKBytes = 4, kKRwbs = 5, kKIssue = 6;
// kernel_session: sample_hz, sample_event, sources
inline constexpr int kKSessionHz = 0, kKSessionEvent = 1, kKSessionSources = 2;
// kernel_block_device: dev, name
inline constexpr int kKDeviceDev = 0, kKDeviceName = 1;
// kernel_symbol: address, name, module
inline constexpr int kKSymbolAddress = 0, kKSymbolName = 1, kKSymbolModule = 2;
// kernel_vdso_image: image
inline constexpr int kKVdsoImage = 0;
}  // namespace field

// The field at `slot` as an unsigned number: unsigned and signed integers
// (two's complement), pointers and bools convert; anything else is 0.
uint64_t field_u64(const reader::Event& e, const KnownEvent& k, int slot);
// As a signed number; `missing` when the event has no such field.
int64_t field_i64(const reader::Event& e, const KnownEvent& k, int slot, int64_t missing = 0);
std::string_view field_str(const reader::Event& e, const KnownEvent& k, int slot);
std::span<const uint8_t> field_blob(const reader::Event& e, const KnownEvent& k, int slot);
bool has_field(const KnownEvent& k, int slot);

// Recognizes every descriptor of a trace up front.
class KnownEvents {
 public:
  explicit KnownEvents(const reader::Trace& trace);
  KnownEvents(const KnownEvents&) = delete;  // the cache points into this one's map
  KnownEvents& operator=(const KnownEvents&) = delete;
  // Cost: a compare in a small direct-mapped cache, a hash lookup of the
  // descriptor pointer when it misses. The hash's division was half of the
  // loading loop's own time on heap traces. Not const: one user at a time.
  const KnownEvent& of(const reader::EventDescriptor* d) {
    Slot& s = slots_[(reinterpret_cast<uintptr_t>(d) * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits)];
    if (s.descriptor == d && d != nullptr) return *s.known;
    auto it = by_descriptor_.find(d);
    const KnownEvent& k = it == by_descriptor_.end() ? other_ : it->second;
    s = Slot{d, &k};
    return k;
  }

 private:
  static constexpr int kSlotBits = 6;
  struct Slot {
    const reader::EventDescriptor* descriptor = nullptr;
    const KnownEvent* known = nullptr;
  };
  std::unordered_map<const reader::EventDescriptor*, KnownEvent> by_descriptor_;  // never changes after construction
  KnownEvent other_;
  Slot slots_[1 << kSlotBits];
};

// "Spoor.Heap", "Alloc" -> heap_alloc; `other` for anything else.
KnownEvent recognize(const reader::EventDescriptor& d);

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_KNOWN_EVENTS_H
