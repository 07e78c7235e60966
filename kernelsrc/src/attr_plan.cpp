#include "spoor/kernelsrc/attr_plan.h"

#include <errno.h>
#include <time.h>

#include <algorithm>

namespace spoor::kernelsrc {
namespace {

// What every event shares: disabled until the program execs (then on for
// it and, through inherit, every thread and process it starts; a process
// attached to is on at once), stamped on CLOCK_MONOTONIC like the core's
// ticks, a sample_id trailer on side-band records, and a wakeup at half a
// ring for a drainer that polls.
perf_event_attr base_attr(const Privilege& p, uint32_t data_pages, bool attach) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.disabled = attach ? 0 : 1;
  a.inherit = 1;
  a.enable_on_exec = attach ? 0 : 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  a.sample_id_all = 1;
  a.sample_type = kSampleIdBits;
  a.exclude_kernel = p.kernel_side() ? 0 : 1;
  a.exclude_hv = 1;
  a.watermark = 1;
  a.wakeup_watermark = data_pages * 4096u / 2;
  return a;
}

// A machine-wide event: every task on its CPU, on from the moment it is opened.
perf_event_attr machine_wide_attr(perf_event_attr a) {
  a.inherit = 0;
  a.enable_on_exec = 0;
  a.disabled = 0;
  a.exclude_kernel = 0;
  return a;
}

// The ring pages one CPU sample takes, rounded up: the kernel reserves the
// whole requested stack copy, beside the registers and a callchain (up to
// perf's 127 frames by default), whatever it then copies.
uint32_t sample_ring_pages(const PlanOptions& o) {
  const uint32_t bytes = o.stack_copy_bytes() + 8 * 17 + 8 * 128 + 128;
  return (bytes + 4095) / 4096;
}

uint32_t round_up_pow2(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace

std::string paranoid_hint(const Privilege& p, int needed) {
  return "needs root or CAP_PERFMON, or sysctl kernel.perf_event_paranoid=" + std::to_string(needed) +
         " (it is " + std::to_string(p.paranoid) + ")";
}

uint64_t dwarf_regs_mask() {
#if defined(__x86_64__)
  return kX86DwarfRegsMask;
#else
  return 0;
#endif
}

AttrPlan plan_attrs(const PlanOptions& o, const TracepointLookup& lookup) {
  AttrPlan plan;
  const Privilege& priv = o.privilege;
  const KernelRequest& r = o.request;
  // 512 KiB per CPU is what an unprivileged user may lock by default
  // (perf_event_mlock_kb 516 = 128 data pages + the header page): room for
  // 32 DWARF samples of its default 16 KiB (the kernel reserves the full
  // copy size per sample), 32 ms at 1 kHz where the recorder drains every
  // millisecond, and 8 of 64 KiB. A privileged recorder takes room for 128
  // stack copies, at least 2 MiB: 4 MiB at 32 KiB, 8 MiB at 64 KiB.
  const uint32_t stack_pages = (o.stack_copy_bytes() + 4095) / 4096;
  plan.ring_data_pages = priv.perfmon ? std::max(512u, round_up_pow2(128 * stack_pages)) : 128;
  plan.ring_min_data_pages = std::min(plan.ring_data_pages, std::max(8u, round_up_pow2(2 * sample_ring_pages(o))));
  const perf_event_attr base = base_attr(priv, plan.ring_data_pages, o.attach);

  // The side-band event is always there: the mappings, names, forks and
  // exits are what every other record is read against.
  PlannedEvent side;
  side.role = Role::sideband;
  side.source = (r.switches || r.all) ? "switches" : "sideband";
  side.attr = base;
  side.attr.type = PERF_TYPE_SOFTWARE;
  side.attr.config = PERF_COUNT_SW_DUMMY;
  side.attr.mmap = 1;
  side.attr.mmap2 = 1;
  side.attr.build_id = 1;
  side.attr.comm = 1;
  side.attr.comm_exec = 1;
  side.attr.task = 1;
  side.attr.context_switch = (r.switches || r.all) ? 1 : 0;
  perf_event_attr no_build_id = side.attr;
  no_build_id.build_id = 0;
  side.fallback = no_build_id;
  side.fallback_errnos = {EINVAL};
  side.fallback_note = "mappings: this kernel puts no build IDs in mmap records (before 5.12)";
  plan.events.push_back(side);

  if (r.samples || r.all) {
    if (o.sample_hz <= 0) {
      plan.unavailable.push_back({"samples", "--sample-hz is 0"});
    } else {
      PlannedEvent s;
      s.role = Role::cpu_sample;
      s.source = "samples";
      s.attr = base;
      s.attr.type = PERF_TYPE_HARDWARE;
      s.attr.config = PERF_COUNT_HW_CPU_CYCLES;
      s.attr.freq = 1;
      s.attr.sample_freq = static_cast<uint64_t>(o.sample_hz);
      s.attr.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
      s.attr.exclude_callchain_kernel = priv.kernel_side() ? 0 : 1;
      const uint64_t regs = dwarf_regs_mask();
      if (regs != 0) {
        s.attr.sample_type |= PERF_SAMPLE_REGS_USER;
        s.attr.sample_regs_user = regs;
      }
      if (o.stack_copy_bytes() > 0 && regs != 0) {
        s.attr.sample_type |= PERF_SAMPLE_STACK_USER;
        s.attr.sample_stack_user = o.stack_copy_bytes();
      }
      perf_event_attr clock = s.attr;
      clock.type = PERF_TYPE_SOFTWARE;
      clock.config = PERF_COUNT_SW_CPU_CLOCK;
      s.fallback = clock;
      s.fallback_errnos = {ENOENT, EOPNOTSUPP};
      s.fallback_note = "samples: no hardware cycles counter here (no PMU): sampling cpu-clock instead";
      plan.events.push_back(s);
      if (!priv.kernel_side())
        plan.notes.push_back("samples: user mode only, no kernel stacks (" + paranoid_hint(priv, 1) + ")");
    }
  }

  if (r.faults || r.all) {
    for (const auto& [role, config] : {std::pair{Role::fault_minor, PERF_COUNT_SW_PAGE_FAULTS_MIN},
                                       std::pair{Role::fault_major, PERF_COUNT_SW_PAGE_FAULTS_MAJ}}) {
      PlannedEvent f;
      f.role = role;
      f.source = "faults";
      f.attr = base;
      f.attr.type = PERF_TYPE_SOFTWARE;
      f.attr.config = config;
      f.attr.sample_period = 1;
      f.attr.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN;
      f.attr.exclude_callchain_kernel = 1;
      plan.events.push_back(f);
    }
    if (!priv.kernel_side())
      plan.notes.push_back("faults: only those taken in user mode (not in syscalls copying to the program's "
                           "memory): " + paranoid_hint(priv, 1));
  }

  // Tracepoints: the ID from tracefs, RAW data with the fields of its format.
  // Returns false (and says why) when the tracepoint has no ID.
  auto tracepoint = [&](Role role, const std::string& source, const std::string& group, const std::string& name,
                        bool wide) {
    const TracepointId id = lookup(group, name);
    if (!id.error.empty()) {
      plan.unavailable.push_back({source, group + ":" + name + ": " + id.error});
      return false;
    }
    PlannedEvent t;
    t.role = role;
    t.source = source;
    t.tracepoint = group + ":" + name;
    t.attr = wide ? machine_wide_attr(base) : base;
    t.attr.type = PERF_TYPE_TRACEPOINT;
    t.attr.config = id.id;
    t.attr.sample_period = 1;
    t.attr.sample_type |= PERF_SAMPLE_RAW;
    t.machine_wide = wide;
    plan.events.push_back(t);
    return true;
  };
  // An enter/exit (or issue/complete) pair: both or neither. One reason is
  // enough: without the first, the second is not tried.
  auto tracepoint_pair = [&](Role first, Role second, const std::string& source, const std::string& group,
                             const std::string& first_name, const std::string& second_name, bool wide) {
    if (tracepoint(first, source, group, first_name, wide) && !tracepoint(second, source, group, second_name, wide))
      plan.events.pop_back();
  };

  if (r.all_syscalls || r.all) {
    tracepoint_pair(Role::raw_syscall_enter, Role::raw_syscall_exit, "syscalls", "raw_syscalls", "sys_enter", "sys_exit",
                    false);
  } else {
    for (const std::string& sc : r.syscalls) {
      const size_t before = plan.events.size();
      tracepoint_pair(Role::syscall_enter, Role::syscall_exit, "syscalls:" + sc, "syscalls", "sys_enter_" + sc,
                      "sys_exit_" + sc, false);
      for (size_t i = before; i < plan.events.size(); ++i) plan.events[i].syscall = sc;
    }
  }

  // Machine-wide tracepoints with RAW data: privileged only. Asked for by
  // name, their absence is an error to report; under --kernel-all, a note.
  auto privileged = [&](bool asked, const char* source, auto add) {
    if (!asked && !r.all) return;
    if (!priv.raw_tracepoints()) {
      const std::string why = std::string("machine-wide tracepoints with raw data: ") + paranoid_hint(priv, -1);
      if (asked) plan.unavailable.push_back({source, why});
      else plan.notes.push_back(std::string(source) + ": not recorded, " + why);
      return;
    }
    add();
  };
  privileged(r.sched, "sched", [&] {
    if (tracepoint(Role::sched_switch, "sched", "sched", "sched_switch", true))
      tracepoint(Role::sched_waking, "sched", "sched", "sched_waking", true);
  });
  privileged(r.block, "block", [&] {
    tracepoint_pair(Role::block_issue, Role::block_complete, "block", "block", "block_rq_issue", "block_rq_complete",
                    true);
  });
  return plan;
}

}  // namespace spoor::kernelsrc
