#include "spoor/analysis/kernel_sched.h"

#include <algorithm>

namespace spoor::analysis {
namespace {

namespace f = field;

// A CPU's history reaches back this many switches: enough for any wait a
// thread spends runnable in practice; a longer one counts its start as
// "unknown" (tid ~0).
constexpr size_t kCpuHistory = 512;

// The kernel's TASK_REPORT bits as sched_switch reports them (6.x
// include/linux/sched.h): 0 running, 0x1 S, 0x2 D, 0x4 T, 0x8 t, 0x10 X,
// 0x20 Z, 0x40 P, 0x80 I, 0x100 (TASK_REPORT_MAX) preempted. Kernels
// before 4.14 reported the preemption as 0x400 or 0x800 (TASK_STATE_MAX);
// both are above every state bit, hence the >= compare.
constexpr uint64_t kInterruptible = 0x1, kUninterruptible = 0x2, kIdle = 0x80, kPreemptedFrom = 0x100;

std::vector<TaskTally> sorted(const std::unordered_map<uint32_t, TaskTally>& m, bool by_time) {
  std::vector<TaskTally> v;
  v.reserve(m.size());
  for (const auto& [tid, t] : m) v.push_back(t);
  std::sort(v.begin(), v.end(), [by_time](const TaskTally& a, const TaskTally& b) {
    const int64_t ka = by_time ? a.ns : static_cast<int64_t>(a.count);
    const int64_t kb = by_time ? b.ns : static_cast<int64_t>(b.count);
    return ka != kb ? ka > kb : a.tid < b.tid;
  });
  return v;
}

}  // namespace

const char* off_cpu_reason_name(OffCpuReason r) {
  switch (r) {
    case OffCpuReason::runnable: return "runnable";
    case OffCpuReason::sleeping: return "sleeping";
    case OffCpuReason::disk_sleep: return "disk sleep";
    case OffCpuReason::other: return "other";
  }
  return "other";
}

OffCpuReason off_cpu_reason(uint64_t prev_state) {
  if (prev_state == 0 || prev_state >= kPreemptedFrom) return OffCpuReason::runnable;
  if (prev_state & kUninterruptible) return OffCpuReason::disk_sleep;
  if (prev_state & (kInterruptible | kIdle)) return OffCpuReason::sleeping;
  return OffCpuReason::other;
}

SchedAnalysis::Pending* SchedAnalysis::pending(uint32_t tid) {
  auto it = traced_.find(tid);
  return it == traced_.end() ? nullptr : &it->second;
}

std::string_view SchedAnalysis::comm(uint32_t tid) const {
  if (tid == kInterruptWaker) return "(interrupt)";
  auto it = comms_.find(tid);
  return it == comms_.end() ? std::string_view{} : std::string_view(it->second);
}

ThreadIndex SchedAnalysis::traced(uint32_t tid) const {
  auto it = traced_.find(tid);
  return it == traced_.end() ? kNone : threads_[it->second.index].thread;
}

void SchedAnalysis::note_comm(uint32_t tid, std::string_view comm) {
  if (comm.empty()) return;
  std::string& s = comms_[tid];
  if (s != comm) s = comm;
}

void SchedAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  const KnownEvent& k = *c.known;
  if (c.thread != last_thread_) {
    last_thread_ = c.thread;
    const ThreadInfo& th = c.model->threads[c.thread];
    if (!c.model->processes[c.process].recorder) {
      // A thread id seen again under a new thread (a reused tid) starts afresh.
      auto [it, inserted] = traced_.try_emplace(th.tid);
      if (inserted || threads_[it->second.index].thread != c.thread) {
        it->second = Pending{};
        it->second.index = static_cast<uint32_t>(threads_.size());
        threads_.emplace_back();
        threads_.back().thread = c.thread;
        threads_.back().tid = th.tid;
        tallies_.emplace_back();
      }
    }
  }
  switch (k.kind) {
    case EventKind::kernel_sched_switch: {
      ++sched_events_;
      const auto cpu = static_cast<uint32_t>(field_u64(e, k, f::kKSwCpu));
      const auto prev = static_cast<uint32_t>(field_u64(e, k, f::kKPrevPid));
      const auto next = static_cast<uint32_t>(field_u64(e, k, f::kKNextPid));
      note_comm(prev, field_str(e, k, f::kKPrevComm));
      note_comm(next, field_str(e, k, f::kKNextComm));
      switch_out(prev, field_u64(e, k, f::kKPrevState), e.time_ns);
      switch_in(next, cpu, e.time_ns);
      std::deque<Ran>& h = cpus_[cpu];
      h.push_back({e.time_ns, next});
      if (h.size() > kCpuHistory) h.pop_front();
      return;
    }
    case EventKind::kernel_sched_waking: {
      ++sched_events_;
      const auto woken = static_cast<uint32_t>(field_u64(e, k, f::kKWoken));
      note_comm(woken, field_str(e, k, f::kKWokenComm));
      Pending* p = pending(woken);
      // The first wakeup after a sleep counts; a preempted thread is
      // runnable already (a wakeup of it changes nothing).
      if (p == nullptr || p->out_ns < 0 || p->runnable_ns >= 0) return;
      p->runnable_ns = p->woken_ns = e.time_ns;
      const bool irq = field_u64(e, k, f::kKWakeIrq) != 0;
      p->waker = irq ? kInterruptWaker : static_cast<uint32_t>(field_u64(e, k, f::kKWaker));
      return;
    }
    default:
      return;
  }
}

void SchedAnalysis::switch_out(uint32_t tid, uint64_t prev_state, int64_t t) {
  Pending* p = pending(tid);
  if (p == nullptr || tid == 0) return;
  p->out_ns = t;
  p->reason = off_cpu_reason(prev_state);
  p->runnable_ns = p->reason == OffCpuReason::runnable ? t : -1;
  p->woken_ns = -1;
  ++threads_[p->index].switches[static_cast<size_t>(p->reason)];
}

void SchedAnalysis::switch_in(uint32_t tid, uint32_t cpu, int64_t t) {
  Pending* p = pending(tid);
  if (p == nullptr || tid == 0 || p->out_ns < 0) return;
  SchedThread& th = threads_[p->index];
  Tallies& tally = tallies_[p->index];
  // A switch-in stamped before the thread's switch-out (two CPUs' records
  // whose times disagree) says nothing of how long it was off: counted,
  // as 0 ns, never as negative time.
  if (t < p->out_ns) {
    ++out_of_order_;
    t = p->out_ns;
  }
  th.off_cpu_ns[static_cast<size_t>(p->reason)] += t - p->out_ns;
  off_cpu_.push_back({th.thread, p->out_ns, t, p->reason});
  if (p->woken_ns >= 0) {
    ++th.wakeups;
    TaskTally& w = tally.wakers[p->waker];
    w.tid = p->waker;
    ++w.count;
    wakeups_.push_back({th.thread, p->woken_ns, t, p->waker});
  }
  if (p->runnable_ns >= 0 && p->runnable_ns < t) {
    th.waiting_ns += t - p->runnable_ns;
    // Walk the CPU's history back over [runnable_ns, t): each entry ran
    // from its start to the next entry's start.
    int64_t end = t;
    const std::deque<Ran>& h = cpus_[cpu];
    for (auto it = h.rbegin(); it != h.rend() && end > p->runnable_ns; ++it) {
      const int64_t start = std::max(it->start_ns, p->runnable_ns);
      if (start < end && it->tid != tid) {
        TaskTally& r = tally.ran_instead[it->tid];
        r.tid = it->tid;
        ++r.count;
        r.ns += end - start;
      }
      end = std::min(end, it->start_ns);
    }
    if (end > p->runnable_ns) {
      TaskTally& r = tally.ran_instead[kUnknownTask];
      r.tid = kUnknownTask;
      ++r.count;
      r.ns += end - p->runnable_ns;
    }
  }
  p->out_ns = p->runnable_ns = p->woken_ns = -1;
}

void SchedAnalysis::on_end(const TraceModel& model) {
  (void)model;
  out_.clear();
  for (size_t i = 0; i < threads_.size(); ++i) {
    SchedThread t = threads_[i];
    uint64_t switches = 0;
    for (uint64_t n : t.switches) switches += n;
    if (switches == 0 && t.wakeups == 0) continue;
    t.wakers = sorted(tallies_[i].wakers, false);
    t.ran_instead = sorted(tallies_[i].ran_instead, true);
    for (TaskTally& w : t.wakers) w.comm = comm(w.tid);
    for (TaskTally& r : t.ran_instead)
      r.comm = r.tid == kUnknownTask ? "(before the CPU's recorded history)" : comm(r.tid);
    out_.push_back(std::move(t));
  }
  auto off = [](const SchedThread& t) {
    int64_t s = 0;
    for (int64_t ns : t.off_cpu_ns) s += ns;
    return s;
  };
  std::stable_sort(out_.begin(), out_.end(),
                   [&](const SchedThread& a, const SchedThread& b) { return off(a) > off(b); });
}

}  // namespace spoor::analysis
