#include "spoor/analysis/kernel.h"

#include <algorithm>
#include <cstring>
#include <span>

namespace spoor::analysis {
namespace {
namespace f = field;

bool is_kernel(EventKind k) { return k >= EventKind::kernel_sample && k <= EventKind::kernel_block_device; }
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

bool KernelAnalysis::wants(EventKind kind) const { return is_kernel(kind); }

void KernelAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  const KnownEvent& k = *c.known;
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
      // rt_sigreturn "returns" the interrupted code's register, no result.
      const bool result = st.name != "rt_sigreturn" && st.name != "sigreturn";
      if (result && ret < 0 && ret >= -4095) ++st.errors;
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
