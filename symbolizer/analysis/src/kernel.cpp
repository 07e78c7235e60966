#include "spoor/analysis/kernel.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <unordered_map>
#include <vector>

namespace spoor::analysis {
namespace {
namespace f = field;

bool is_kernel(EventKind k) { return k >= EventKind::kernel_sample && k <= EventKind::kernel_block_device; }

// A return value in [-4095, -1], but rt_sigreturn's: it "returns" the
// interrupted code's register, no result.
bool is_error(const SyscallStats& call, int64_t ret) {
  return ret < 0 && ret >= -4095 && call.name != "rt_sigreturn" && call.name != "sigreturn";
}
}  // namespace

KernelAnalysis::PerThread& KernelAnalysis::state(ThreadIndex t) {
  auto [it, inserted] = per_thread_.try_emplace(t);
  if (inserted) {
    it->second.index = static_cast<uint32_t>(threads_.size());
    threads_.emplace_back();
    threads_.back().thread = t;
  }
  return it->second;
}

uint32_t KernelAnalysis::syscall_index(uint32_t nr, std::string_view name) {
  auto [it, inserted] = syscall_by_nr_.try_emplace(nr, static_cast<uint32_t>(syscalls_.size()));
  if (inserted) {
    syscalls_.emplace_back();
    syscalls_.back().nr = nr;
  }
  SyscallStats& s = syscalls_[it->second];
  if (s.name.empty()) s.name = name.empty() ? "syscall " + std::to_string(nr) : std::string(name);
  return it->second;
}

bool KernelAnalysis::wants(EventKind kind) const { return is_kernel(kind) || kind == EventKind::shim_started; }

void KernelAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  const KnownEvent& k = *c.known;
  if (k.kind == EventKind::shim_started) {
    const auto took = static_cast<int64_t>(field_u64(e, k, f::kShimDuration));
    shim_windows_.push_back({c.thread, e.time_ns - took, e.time_ns});
    return;
  }
  if (!is_kernel(k.kind)) return;
  ++events_;
  switch (k.kind) {
    case EventKind::kernel_lost:
      lost_[std::string(field_str(e, k, f::kKLostSource))] += field_u64(e, k, f::kKLostCount);
      return;
    case EventKind::kernel_sample:
      ++threads_[state(c.thread).index].samples;
      return;
    case EventKind::kernel_session:
      session_.recorded = true;
      session_.sample_hz = static_cast<uint32_t>(field_u64(e, k, f::kKSessionHz));
      session_.sample_event = field_str(e, k, f::kKSessionEvent);
      session_.sources = field_str(e, k, f::kKSessionSources);
      return;
    case EventKind::kernel_switch: {
      PerThread& s = state(c.thread);
      KernelThread& t = threads_[s.index];
      if (field_u64(e, k, f::kKOut) != 0) {
        const bool preempted = field_u64(e, k, f::kKPreempted) != 0;
        ++t.switches;
        ++(preempted ? t.preempted : t.blocked);
        s.out_ns = e.time_ns;
        s.out_preempted = preempted;
      } else if (s.out_ns >= 0) {
        t.off_cpu_ns += e.time_ns - s.out_ns;
        off_cpu_.push_back({c.thread, s.out_ns, e.time_ns, s.out_preempted});
        s.out_ns = -1;
      }
      return;
    }
    case EventKind::kernel_fault: {
      const bool major = field_u64(e, k, f::kKMajor) != 0;
      KernelThread& t = threads_[state(c.thread).index];
      ++(major ? t.major_faults : t.minor_faults);
      ++(major ? major_ : minor_);
      const uint64_t ip = field_u64(e, k, f::kKFaultIp);
      faults_.push_back({c.thread, c.image, e.time_ns, field_u64(e, k, f::kKFaultAddress), ip, major});
      // The callchain's context markers are kernel addresses too, never a
      // user frame.
      uint64_t site_ip = ip, kernel_ip = 0;
      if (is_kernel_address(ip)) {
        const std::span<const uint8_t> chain = field_blob(e, k, f::kKFaultCallchain);
        uint64_t user = 0;
        if (chain.size() >= 8) std::memcpy(&user, chain.data(), 8);
        if (user != 0 && !is_kernel_address(user)) {
          site_ip = user;
          kernel_ip = ip;
        }
      }
      FaultSite& site = sites_[{c.image, site_ip, kernel_ip}];
      site.image = c.image;
      site.ip = site_ip;
      site.kernel_ip = kernel_ip;
      ++(major ? site.major : site.minor);
      return;
    }
    case EventKind::kernel_syscall_enter: {
      PerThread& s = state(c.thread);
      s.enter_ns = e.time_ns;
      s.enter_nr = static_cast<uint32_t>(field_u64(e, k, f::kKNr));
      // Counted here: exit_group and exit never come back to an exit.
      ++syscalls_[syscall_index(s.enter_nr, field_str(e, k, f::kKSyscallName))].count;
      return;
    }
    case EventKind::kernel_syscall_exit: {
      PerThread& s = state(c.thread);
      auto nr = static_cast<uint32_t>(field_u64(e, k, f::kKNr));
      const int64_t begun = s.enter_ns;
      const bool pending = begun >= 0;
      s.enter_ns = -1;
      // After rt_sigreturn the kernel reads the call's number from the
      // registers it restored, -1 as a rule: the exit is the pending call's.
      if (nr == kUnknownSyscallNr) {
        if (!pending) return;  // no call to name
        nr = s.enter_nr;
      }
      const bool entered = pending && s.enter_nr == nr;
      const uint32_t i = syscall_index(nr, field_str(e, k, f::kKSyscallName));
      SyscallStats& st = syscalls_[i];
      if (!entered) ++st.count;  // its enter came before the recording
      const int64_t ret = field_i64(e, k, f::kKRet);
      if (is_error(st, ret)) ++st.errors;
      if (entered) {
        const int64_t ns = e.time_ns - begun;
        st.total_ns += ns;
        st.max_ns = std::max(st.max_ns, ns);
        ++threads_[s.index].syscalls;
        syscall_intervals_.push_back({c.thread, i, begun, e.time_ns, ret});
      }
      return;
    }
    default:
      return;
  }
}

void KernelAnalysis::on_end(const TraceModel& model) {
  (void)model;
  leave_out_shim_syscalls();
}

// The windows come after the calls in them (ShimStarted is written as the
// start ends), so the calls are taken out of the totals here, at the end:
// counts, errors and time by subtraction, the longest by looking again.
void KernelAnalysis::leave_out_shim_syscalls() {
  shim_syscalls_.starts = shim_windows_.size();
  if (shim_windows_.empty() || syscall_intervals_.empty()) return;
  std::unordered_map<ThreadIndex, std::vector<ShimWindow>> by_thread;
  for (const ShimWindow& w : shim_windows_) by_thread[w.thread].push_back(w);
  const auto in_shim = [&](const SyscallInterval& call) {
    const auto it = by_thread.find(call.thread);
    if (it == by_thread.end()) return false;
    for (const ShimWindow& w : it->second)
      if (call.start_ns >= w.start_ns && call.end_ns <= w.end_ns) return true;
    return false;
  };
  std::vector<SyscallInterval> kept;
  kept.reserve(syscall_intervals_.size());
  std::vector<bool> touched(syscalls_.size(), false);
  for (const SyscallInterval& call : syscall_intervals_) {
    if (!in_shim(call)) {
      kept.push_back(call);
      continue;
    }
    SyscallStats& st = syscalls_[call.syscall];
    const int64_t ns = call.end_ns - call.start_ns;
    --st.count;
    if (is_error(st, call.ret)) --st.errors;
    st.total_ns -= ns;
    touched[call.syscall] = true;
    --threads_[per_thread_[call.thread].index].syscalls;
    ++shim_syscalls_.count;
    shim_syscalls_.total_ns += ns;
  }
  if (shim_syscalls_.count == 0) return;
  for (size_t i = 0; i < syscalls_.size(); ++i)
    if (touched[i]) syscalls_[i].max_ns = 0;
  for (const SyscallInterval& call : kept)
    if (touched[call.syscall])
      syscalls_[call.syscall].max_ns = std::max(syscalls_[call.syscall].max_ns, call.end_ns - call.start_ns);
  // Calls only the library made (its socket, connect, recvmsg) go.
  std::vector<uint32_t> renumbered(syscalls_.size(), 0);
  std::vector<SyscallStats> left;
  for (size_t i = 0; i < syscalls_.size(); ++i) {
    renumbered[i] = static_cast<uint32_t>(left.size());
    if (syscalls_[i].count > 0) left.push_back(std::move(syscalls_[i]));
  }
  for (SyscallInterval& call : kept) call.syscall = renumbered[call.syscall];
  syscalls_ = std::move(left);
  syscall_by_nr_.clear();
  for (size_t i = 0; i < syscalls_.size(); ++i) syscall_by_nr_[syscalls_[i].nr] = static_cast<uint32_t>(i);
  syscall_intervals_ = std::move(kept);
}

std::vector<FaultSite> KernelAnalysis::fault_sites() const {
  std::vector<FaultSite> out;
  out.reserve(sites_.size());
  for (const auto& [key, site] : sites_) out.push_back(site);
  std::stable_sort(out.begin(), out.end(), [](const FaultSite& a, const FaultSite& b) {
    return a.minor + a.major > b.minor + b.major;
  });
  return out;
}

}  // namespace spoor::analysis
