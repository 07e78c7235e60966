// What the kernel says about the traced threads (Spoor.Kernel, written by
// the recorder from perf_event_open: kernelsrc/): context switches with
// the time each thread spent off the CPU, page faults and where they hit,
// system calls with their durations and errors, and the kernel records
// lost. CPU samples are CpuAnalysis(SampleSource::kernel)'s.
//
// Definitions:
// - a switch is a switch-out; preempted: switched out while runnable
//   (the kernel's PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), blocked otherwise.
// - off-CPU time: from a switch-out to the thread's next switch-in; an
//   out without a later in (the thread ended) adds nothing.
// - a syscall's time: its SyscallEnter to the thread's next SyscallExit of
//   the same nr. An exit of nr -1 (the kernel's after rt_sigreturn, which
//   restores the registers it reads the number from) is the pending
//   enter's, and dropped without one.
// - calls: enters (exit_group never exits), and exits whose enter came
//   before the recording; an error is a return value in [-4095, -1],
//   except rt_sigreturn's (the interrupted code's register, no result).
// - the preloaded library's own start (Spoor.Process ShimStarted: its
//   constructor, a fork child's joining, a new thread's set-up) is not the
//   program's: the system calls a thread made wholly within it are left
//   out of every count, and counted apart (shim_syscalls).
#ifndef SPOOR_ANALYSIS_KERNEL_H
#define SPOOR_ANALYSIS_KERNEL_H

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "spoor/analysis/load.h"

namespace spoor::analysis {

struct KernelThread {
  ThreadIndex thread = kNone;
  uint64_t switches = 0;  // switch-outs
  uint64_t preempted = 0;
  uint64_t blocked = 0;
  int64_t off_cpu_ns = 0;
  uint64_t minor_faults = 0;
  uint64_t major_faults = 0;
  uint64_t syscalls = 0;  // completed (enter and exit seen)
  uint64_t samples = 0;
};

// A thread's time off the CPU, from switch-out to switch-in.
struct OffCpuInterval {
  ThreadIndex thread = kNone;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool preempted = false;
};

struct PageFaultEvent {
  ThreadIndex thread = kNone;
  ImageIndex image = kNone;
  int64_t time_ns = 0;
  uint64_t address = 0;  // the faulting data address
  uint64_t ip = 0;
  bool major = false;
};

// Faults at one instruction of one image. A fault the kernel took while
// touching user memory for a system call (read() copying into its buffer)
// has the kernel's instruction, which only a trace with KernelSymbol
// events names: its site is the user-space instruction that made the call,
// the fault's callchain's first frame, with the kernel's instruction
// beside it (kernel_ip).
struct FaultSite {
  ImageIndex image = kNone;
  uint64_t ip = 0;
  uint64_t kernel_ip = 0;  // a fault in the kernel: its instruction (KernelSymbol may name it); else 0
  bool in_kernel() const { return kernel_ip != 0; }
  uint64_t minor = 0;
  uint64_t major = 0;
};

// The nr a SyscallExit carries when the kernel cannot say (-1).
inline constexpr uint32_t kUnknownSyscallNr = 0xffffffffu;

struct SyscallStats {
  std::string name;  // the event's, else "syscall N"
  uint32_t nr = 0;
  uint64_t count = 0;
  uint64_t errors = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
};

struct SyscallInterval {
  ThreadIndex thread = kNone;
  uint32_t syscall = 0;  // index into KernelAnalysis::syscalls()
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t ret = 0;
};

// System calls left out as the preloaded library's (ShimStarted).
struct ShimSyscalls {
  uint64_t count = 0;
  int64_t total_ns = 0;
  uint64_t starts = 0;  // ShimStarted events: its starts in processes, fork children, execs and threads
};

// The recording's settings (Spoor.Kernel Session); recorded is false for
// traces written before it existed.
struct KernelSessionInfo {
  bool recorded = false;
  uint32_t sample_hz = 0;    // samples per second of a thread's CPU time; 0: no sampler
  std::string sample_event;  // "cpu-clock", "cycles"
  std::string sources;       // "samples,switches,sched"
};

class KernelAnalysis final : public EventVisitor {
 public:
  // Cost per kernel event: one or two hash lookups (the thread's state).
  void on_event(const reader::Event& event, const EventContext& context) override;
  // Spoor.Kernel's events, and ShimStarted.
  bool wants(EventKind kind) const override;
  // Leaves out the system calls made within the preloaded library's starts.
  void on_end(const TraceModel& model) override;

  // Any Spoor.Kernel event at all.
  bool any() const { return events_ > 0; }
  uint64_t events() const { return events_; }
  // Threads with a kernel event, in order of their first one.
  const std::vector<KernelThread>& threads() const { return threads_; }
  const std::vector<OffCpuInterval>& off_cpu() const { return off_cpu_; }
  const std::vector<PageFaultEvent>& faults() const { return faults_; }
  // By most faults first.
  std::vector<FaultSite> fault_sites() const;
  // In order of first call; syscall_intervals() index into it.
  const std::vector<SyscallStats>& syscalls() const { return syscalls_; }
  const std::vector<SyscallInterval>& syscall_intervals() const { return syscall_intervals_; }
  // Kernel records lost, per source ("samples", "switches", ...).
  const std::map<std::string, uint64_t>& lost() const { return lost_; }
  const KernelSessionInfo& session() const { return session_; }
  // After on_end.
  const ShimSyscalls& shim_syscalls() const { return shim_syscalls_; }
  uint64_t minor_faults() const { return minor_; }
  uint64_t major_faults() const { return major_; }

 private:
  struct PerThread {
    uint32_t index = 0;            // into threads_
    int64_t out_ns = -1;           // the pending switch-out, -1 when none
    bool out_preempted = false;
    int64_t enter_ns = -1;         // the pending SyscallEnter, -1 when none
    uint32_t enter_nr = 0;
  };
  struct ShimWindow {
    ThreadIndex thread = kNone;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
  };
  PerThread& state(ThreadIndex t);
  void leave_out_shim_syscalls();
  uint32_t syscall_index(uint32_t nr, std::string_view name);

  uint64_t events_ = 0;
  std::vector<KernelThread> threads_;
  std::unordered_map<ThreadIndex, PerThread> per_thread_;
  std::vector<OffCpuInterval> off_cpu_;
  std::vector<PageFaultEvent> faults_;
  std::map<std::tuple<ImageIndex, uint64_t, uint64_t>, FaultSite> sites_;  // (image, ip, kernel_ip)
  std::vector<SyscallStats> syscalls_;
  std::unordered_map<uint32_t, uint32_t> syscall_by_nr_;
  std::vector<SyscallInterval> syscall_intervals_;
  std::map<std::string, uint64_t> lost_;
  KernelSessionInfo session_;
  std::vector<ShimWindow> shim_windows_;
  ShimSyscalls shim_syscalls_;
  uint64_t minor_ = 0;
  uint64_t major_ = 0;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_KERNEL_H
