// The scheduler's view of the traced threads, from the privileged tier's
// machine-wide tracepoints (Spoor.Kernel SchedSwitch and SchedWaking,
// `spoor record --kernel=sched`): why each thread was off the CPU, who woke
// it, and what ran on the CPU while it waited to run.
//
// Definitions:
// - a traced thread: one of a traced process's (any event of it came
//   before, a kernel Fork or Comm included); the scheduler events name
//   tasks by kernel pid, which is a thread id.
// - off-CPU reason, from SchedSwitch's prev_state (the kernel's
//   TASK_REPORT bits): runnable (0, or TASK_REPORT_MAX: preempted),
//   sleeping (S, and I for idle kernel threads), disk sleep (D:
//   uninterruptible, mostly waiting for I/O), other (stopped, traced,
//   dead, parked). The time runs from the switch-out to the next switch-in.
// - waker: the task running when the first SchedWaking of the thread came
//   after it switched out; counted when the thread switches back in. A
//   wakeup in interrupt context (SchedWaking's irq, in traces that have
//   it) has the waker kInterruptWaker: the task it hit did not do it.
// - waiting to run: from a preemption, or from its wakeup, to the
//   switch-in; what ran instead is what the CPU the thread then ran on was
//   running over that time (tid 0: the CPU was idle).
#ifndef SPOOR_ANALYSIS_KERNEL_SCHED_H
#define SPOOR_ANALYSIS_KERNEL_SCHED_H

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spoor/analysis/load.h"

namespace spoor::analysis {

// The waker of a wakeup done by an interrupt (hard, soft or NMI).
inline constexpr uint32_t kInterruptWaker = 0xfffffffeu;
// What ran instead before the start of a CPU's kept history.
inline constexpr uint32_t kUnknownTask = 0xffffffffu;

enum class OffCpuReason : uint8_t { runnable, sleeping, disk_sleep, other };
inline constexpr size_t kOffCpuReasons = 4;
const char* off_cpu_reason_name(OffCpuReason r);  // "runnable", "sleeping", "disk sleep", "other"
OffCpuReason off_cpu_reason(uint64_t prev_state);

// Per other task (by tid): how often, or how long.
struct TaskTally {
  uint32_t tid = 0;
  std::string comm;  // the last name seen for it; "" when never seen
  uint64_t count = 0;
  int64_t ns = 0;
};

struct SchedThread {
  ThreadIndex thread = kNone;
  uint32_t tid = 0;
  std::array<int64_t, kOffCpuReasons> off_cpu_ns{};   // by OffCpuReason
  std::array<uint64_t, kOffCpuReasons> switches{};    // switch-outs, by reason
  uint64_t wakeups = 0;                                // switch-ins after a SchedWaking
  int64_t waiting_ns = 0;                              // runnable but not running
  std::vector<TaskTally> wakers;                       // most wakeups first
  std::vector<TaskTally> ran_instead;                  // most time first
};

// One wakeup of a traced thread, for the timeline.
struct Wakeup {
  ThreadIndex thread = kNone;
  int64_t woken_ns = 0;  // the SchedWaking
  int64_t run_ns = 0;    // the switch-in that followed
  uint32_t waker = 0;    // tid, or kInterruptWaker
};

// A traced thread off the CPU, with the reason.
struct SchedOffCpu {
  ThreadIndex thread = kNone;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  OffCpuReason reason = OffCpuReason::other;
};

class SchedAnalysis final : public EventVisitor {
 public:
  // Cost: every event, one compare (its thread is the last one seen); a
  // new thread, one hash insert. A SchedSwitch: a few hash lookups and one
  // per-CPU history append; a switch-in after waiting also walks the CPU's
  // history back over the wait.
  void on_event(const reader::Event& event, const EventContext& context) override;
  void on_end(const TraceModel& model) override;

  bool any() const { return sched_events_ > 0; }
  // Switch-ins whose time came before the thread's last switch-out (the
  // records of two CPUs out of order): each counted as 0 ns off the CPU.
  uint64_t out_of_order() const { return out_of_order_; }
  // Traced threads with a scheduler event, most time off the CPU first
  // (after on_end).
  const std::vector<SchedThread>& threads() const { return out_; }
  const std::vector<Wakeup>& wakeups() const { return wakeups_; }
  const std::vector<SchedOffCpu>& off_cpu() const { return off_cpu_; }
  // The last name the scheduler gave `tid` ("" when none); "(interrupt)"
  // for kInterruptWaker.
  std::string_view comm(uint32_t tid) const;
  // The traced thread with kernel pid `tid`, or kNone.
  ThreadIndex traced(uint32_t tid) const;

 private:
  struct Pending {
    uint32_t index = 0;            // into threads_
    int64_t out_ns = -1;           // the pending switch-out, -1 when on the CPU
    OffCpuReason reason = OffCpuReason::other;
    int64_t runnable_ns = -1;      // since when it waits to run, -1 when not
    int64_t woken_ns = -1;
    uint32_t waker = 0;
  };
  struct Ran {
    int64_t start_ns;
    uint32_t tid;
  };
  struct Tallies {
    std::unordered_map<uint32_t, TaskTally> wakers, ran_instead;
  };

  void note_comm(uint32_t tid, std::string_view comm);
  void switch_out(uint32_t tid, uint64_t prev_state, int64_t t);
  void switch_in(uint32_t tid, uint32_t cpu, int64_t t);
  Pending* pending(uint32_t tid);

  uint64_t sched_events_ = 0;
  uint64_t out_of_order_ = 0;
  ThreadIndex last_thread_ = kNone;
  std::unordered_map<uint32_t, Pending> traced_;  // by tid
  std::vector<SchedThread> threads_;
  std::vector<Tallies> tallies_;  // beside threads_
  std::unordered_map<uint32_t, std::string> comms_;
  std::unordered_map<uint32_t, std::deque<Ran>> cpus_;  // what each CPU ran lately
  std::vector<Wakeup> wakeups_;
  std::vector<SchedOffCpu> off_cpu_;
  std::vector<SchedThread> out_;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_KERNEL_SCHED_H
