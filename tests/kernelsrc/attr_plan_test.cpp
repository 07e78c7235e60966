// The options-to-perf_event_attr mapping, with no kernel: privilege and
// tracepoint IDs are arguments.
#include "spoor/kernelsrc/attr_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

namespace spoor::kernelsrc {
namespace {

TracepointId known_ids(const std::string& group, const std::string& name) {
  return {std::hash<std::string>{}(group + ":" + name) & 0xFFFF, ""};
}

const Privilege kUnprivileged{2, false};
const Privilege kRoot{2, true};

PlanOptions request(const std::string& spec, Privilege p = kUnprivileged) {
  PlanOptions o;
  std::string error;
  EXPECT_TRUE(parse_kernel_spec(spec, &o.request, &error)) << error;
  o.privilege = p;
  return o;
}

const PlannedEvent* find(const AttrPlan& plan, Role role) {
  auto it = std::find_if(plan.events.begin(), plan.events.end(), [&](auto& e) { return e.role == role; });
  return it == plan.events.end() ? nullptr : &*it;
}

bool mentions(const std::vector<Unavailable>& list, const std::string& source, const std::string& text) {
  return std::any_of(list.begin(), list.end(),
                     [&](auto& u) { return u.source == source && u.reason.find(text) != std::string::npos; });
}

// Attached to a running process, the events are on from their opening
// and still follow what it starts.
TEST(AttrPlan, AnAttachedProcessesEventsAreOnAtOnce) {
  PlanOptions options = request("samples,switches,faults,syscalls:read");
  options.attach = true;
  const AttrPlan plan = plan_attrs(options, known_ids);
  ASSERT_GE(plan.events.size(), 5u);
  for (const PlannedEvent& e : plan.events) {
    EXPECT_FALSE(e.attr.disabled || e.attr.enable_on_exec) << e.source;
    EXPECT_TRUE(e.attr.inherit) << e.source;
  }
}

TEST(AttrPlan, EveryEventFollowsTheProgramTreeFromItsExecOnTheMonotonicClock) {
  const AttrPlan plan = plan_attrs(request("samples,switches,faults,syscalls:read"), known_ids);
  ASSERT_GE(plan.events.size(), 5u);
  for (const PlannedEvent& e : plan.events) {
    EXPECT_EQ(e.attr.size, sizeof(perf_event_attr));
    EXPECT_TRUE(e.attr.disabled && e.attr.enable_on_exec && e.attr.inherit) << e.source;
    EXPECT_TRUE(e.attr.use_clockid);
    EXPECT_EQ(e.attr.clockid, CLOCK_MONOTONIC);
    EXPECT_TRUE(e.attr.sample_id_all);
    EXPECT_EQ(e.attr.sample_type & kSampleIdBits, kSampleIdBits) << "every record names its event and time";
    EXPECT_FALSE(e.machine_wide);
  }
}

TEST(AttrPlan, TheSideBandEventComesFirstAndCarriesMappingsNamesTasksAndSwitches) {
  const AttrPlan plan = plan_attrs(request("switches"), known_ids);
  ASSERT_EQ(plan.events.size(), 1u);
  const perf_event_attr& a = plan.events[0].attr;
  EXPECT_EQ(plan.events[0].role, Role::sideband);
  EXPECT_EQ(a.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(a.config, PERF_COUNT_SW_DUMMY);
  EXPECT_TRUE(a.mmap && a.mmap2 && a.build_id && a.comm && a.comm_exec && a.task);
  EXPECT_TRUE(a.context_switch);
  EXPECT_EQ(plan.events[0].source, "switches");
  ASSERT_TRUE(plan.events[0].fallback.has_value()) << "for kernels before 5.12";
  EXPECT_FALSE(plan.events[0].fallback->build_id);
  EXPECT_EQ(plan.events[0].fallback_errnos, std::vector<int>{EINVAL});

  const AttrPlan no_switches = plan_attrs(request("faults"), known_ids);
  EXPECT_FALSE(no_switches.events[0].attr.context_switch);
}

TEST(AttrPlan, SamplesAskForCyclesWithCpuClockFallbackRegistersAndStack) {
  PlanOptions o = request("samples");
  o.sample_hz = 4000;
  o.stack_bytes = 12345;
  const AttrPlan plan = plan_attrs(o, known_ids);
  const PlannedEvent* s = find(plan, Role::cpu_sample);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->attr.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(s->attr.config, PERF_COUNT_HW_CPU_CYCLES);
  EXPECT_TRUE(s->attr.freq);
  EXPECT_EQ(s->attr.sample_freq, 4000u);
  ASSERT_TRUE(s->fallback.has_value());
  EXPECT_EQ(s->fallback->type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(s->fallback->config, PERF_COUNT_SW_CPU_CLOCK);
  EXPECT_EQ(s->fallback->sample_type, s->attr.sample_type);
  EXPECT_NE(s->fallback_note.find("cpu-clock"), std::string::npos);
  EXPECT_EQ(s->fallback_errnos, (std::vector<int>{ENOENT, EOPNOTSUPP}));
#if defined(__x86_64__)
  EXPECT_TRUE(s->attr.sample_type & PERF_SAMPLE_REGS_USER);
  EXPECT_TRUE(s->attr.sample_type & PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(s->attr.sample_regs_user, kX86DwarfRegsMask);
  EXPECT_EQ(__builtin_popcountll(kX86DwarfRegsMask), 17) << "AX..DI, BP, SP, IP, R8..R15";
  EXPECT_EQ(s->attr.sample_stack_user, 12344u) << "rounded down to 8 bytes";
#endif
  EXPECT_TRUE(s->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
}

// A 64 KiB copy: a privileged ring still holds 128 of them; an
// unprivileged one keeps the mlock default; neither falls back to a ring
// too small for two samples (a record larger than its ring is always lost).
TEST(AttrPlan, RingsMakeRoomForTheLargestStackCopy) {
  PlanOptions o = request("samples", kRoot);
  o.stack_bytes = kMaxStackBytes;
  const AttrPlan root = plan_attrs(o, known_ids);
  EXPECT_EQ(root.ring_data_pages, 2048u) << "128 copies of 16 pages";
  EXPECT_GE(root.ring_min_data_pages * 4096u, 2u * kMaxStackBytes);
  o.stack_bytes = 16376;
  EXPECT_EQ(plan_attrs(o, known_ids).ring_data_pages, 512u) << "2 MiB at 16 KiB";
  o.stack_bytes = 4096;
  EXPECT_EQ(plan_attrs(o, known_ids).ring_data_pages, 512u) << "never less than 2 MiB";
  o.privilege = kUnprivileged;
  o.stack_bytes = kMaxStackBytes;
  const AttrPlan user = plan_attrs(o, known_ids);
  EXPECT_EQ(user.ring_data_pages, 128u);
  EXPECT_GE(user.ring_min_data_pages * 4096u, 2u * kMaxStackBytes);
  EXPECT_LE(user.ring_min_data_pages, user.ring_data_pages);
  EXPECT_EQ(user.ring_min_data_pages & (user.ring_min_data_pages - 1), 0u) << "a power of two";
}

// Unset, the copy follows the privilege: 32 KiB where the ring holds 128
// of them, 16 KiB in the 512 KiB an unprivileged user may lock.
TEST(AttrPlan, TheDefaultStackCopyFollowsThePrivilege) {
  PlanOptions o = request("samples", kRoot);
  ASSERT_EQ(o.stack_bytes, kStackBytesByPrivilege);
  AttrPlan plan = plan_attrs(o, known_ids);
  const PlannedEvent* s = find(plan, Role::cpu_sample);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->attr.sample_stack_user, kDefaultStackBytes);
  o.privilege = kUnprivileged;
  plan = plan_attrs(o, known_ids);
  s = find(plan, Role::cpu_sample);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->attr.sample_stack_user, kDefaultUnprivilegedStackBytes);
  EXPECT_EQ(plan.ring_data_pages, 128u);
  o.stack_bytes = 4096;
  plan = plan_attrs(o, known_ids);
  s = find(plan, Role::cpu_sample);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->attr.sample_stack_user, 4096u) << "a size asked for is kept";
}

TEST(AttrPlan, NoStackCopyWhenTheSizeIsZero) {
  PlanOptions o = request("samples");
  o.stack_bytes = 0;
  const AttrPlan plan = plan_attrs(o, known_ids);  // find() points into it: keep it alive
  const PlannedEvent* s = find(plan, Role::cpu_sample);
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->attr.sample_type & PERF_SAMPLE_STACK_USER);
}

TEST(AttrPlan, UnprivilegedEventsExcludeTheKernelAndSaySo) {
  const AttrPlan plan = plan_attrs(request("samples,faults"), known_ids);
  for (const PlannedEvent& e : plan.events) EXPECT_TRUE(e.attr.exclude_kernel) << e.source;
  EXPECT_TRUE(find(plan, Role::cpu_sample)->attr.exclude_callchain_kernel);
  EXPECT_EQ(plan.ring_data_pages, 128u) << "what the default mlock limit allows per CPU";
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_NE(plan.notes[0].find("kernel.perf_event_paranoid=1 (it is 2)"), std::string::npos) << plan.notes[0];
}

TEST(AttrPlan, PrivilegedSamplesIncludeKernelStacks) {
  const AttrPlan plan = plan_attrs(request("samples", kRoot), known_ids);
  const PlannedEvent* s = find(plan, Role::cpu_sample);
  EXPECT_FALSE(s->attr.exclude_kernel);
  EXPECT_FALSE(s->attr.exclude_callchain_kernel);
  EXPECT_GT(plan.ring_data_pages, 128u);
  EXPECT_EQ(plan.ring_data_pages & (plan.ring_data_pages - 1), 0u) << "a power of two";
}

TEST(AttrPlan, ParanoidOneAllowsTheKernelSideWithoutPrivilege) {
  const AttrPlan plan = plan_attrs(request("samples", Privilege{1, false}), known_ids);
  EXPECT_FALSE(find(plan, Role::cpu_sample)->attr.exclude_kernel);
}

TEST(AttrPlan, FaultsAreMinorAndMajorEveryOneWithTheAddress) {
  const AttrPlan plan = plan_attrs(request("faults"), known_ids);
  const PlannedEvent* minor = find(plan, Role::fault_minor);
  const PlannedEvent* major = find(plan, Role::fault_major);
  ASSERT_TRUE(minor && major);
  EXPECT_EQ(minor->attr.config, PERF_COUNT_SW_PAGE_FAULTS_MIN);
  EXPECT_EQ(major->attr.config, PERF_COUNT_SW_PAGE_FAULTS_MAJ);
  for (auto* f : {minor, major}) {
    EXPECT_EQ(f->attr.sample_period, 1u);
    EXPECT_TRUE(f->attr.sample_type & PERF_SAMPLE_ADDR);
  }
}

TEST(AttrPlan, NamedSyscallsAreTheirEnterAndExitTracepointsWithRawData) {
  const AttrPlan plan = plan_attrs(request("syscalls:read,write"), known_ids);
  std::vector<std::string> tracepoints;
  for (const PlannedEvent& e : plan.events)
    if (!e.tracepoint.empty()) {
      tracepoints.push_back(e.tracepoint);
      EXPECT_EQ(e.attr.type, PERF_TYPE_TRACEPOINT);
      EXPECT_EQ(e.attr.config, known_ids("syscalls", e.tracepoint.substr(9)).id);
      EXPECT_TRUE(e.attr.sample_type & PERF_SAMPLE_RAW);
      EXPECT_EQ(e.attr.sample_period, 1u);
      EXPECT_EQ(e.source, "syscalls:" + e.syscall);
    }
  EXPECT_EQ(tracepoints, (std::vector<std::string>{"syscalls:sys_enter_read", "syscalls:sys_exit_read",
                                                   "syscalls:sys_enter_write", "syscalls:sys_exit_write"}));
}

TEST(AttrPlan, AMissingTracepointIsUnavailableWithTheLookupsReason) {
  auto none = [](const std::string&, const std::string&) { return TracepointId{0, "tracefs is root-only"}; };
  const AttrPlan plan = plan_attrs(request("syscalls:read"), none);
  EXPECT_EQ(plan.events.size(), 1u) << "the side-band event only";
  EXPECT_TRUE(mentions(plan.unavailable, "syscalls:read", "tracefs is root-only"));
  EXPECT_EQ(plan.unavailable.size(), 1u) << "said once, not for the enter and the exit";
}

TEST(AttrPlan, AnEnterWithoutItsExitIsNotOpenedAlone) {
  auto no_exit = [](const std::string& group, const std::string& name) {
    return name.starts_with("sys_exit") ? TracepointId{0, "no such tracepoint on this kernel"} : known_ids(group, name);
  };
  const AttrPlan plan = plan_attrs(request("syscalls:read"), no_exit);
  EXPECT_EQ(plan.events.size(), 1u);
  EXPECT_TRUE(mentions(plan.unavailable, "syscalls:read", "sys_exit_read"));
}

TEST(AttrPlan, SchedAndBlockNeedPrivilegeAndSayWhichSysctlWouldDo) {
  const AttrPlan plan = plan_attrs(request("sched,block"), known_ids);
  EXPECT_EQ(find(plan, Role::sched_switch), nullptr);
  EXPECT_TRUE(mentions(plan.unavailable, "sched", "CAP_PERFMON"));
  EXPECT_TRUE(mentions(plan.unavailable, "sched", "kernel.perf_event_paranoid=-1 (it is 2)"));
  EXPECT_TRUE(mentions(plan.unavailable, "block", "CAP_PERFMON"));
}

TEST(AttrPlan, PrivilegedSchedAndBlockAreMachineWideAndOnAtOnce) {
  const AttrPlan plan = plan_attrs(request("sched,block", kRoot), known_ids);
  for (Role r : {Role::sched_switch, Role::sched_waking, Role::block_issue, Role::block_complete}) {
    const PlannedEvent* e = find(plan, r);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->machine_wide);
    EXPECT_FALSE(e->attr.inherit || e->attr.enable_on_exec || e->attr.disabled);
    EXPECT_FALSE(e->attr.exclude_kernel) << "sched tracepoints fire in the kernel";
  }
}

TEST(AttrPlan, KernelAllTakesWhatTheMachineAllowsAndNotesTheRest) {
  const AttrPlan plan = plan_attrs(request("all"), known_ids);
  EXPECT_NE(find(plan, Role::cpu_sample), nullptr);
  EXPECT_NE(find(plan, Role::fault_minor), nullptr);
  EXPECT_NE(find(plan, Role::raw_syscall_enter), nullptr);
  EXPECT_TRUE(plan.events[0].attr.context_switch);
  EXPECT_EQ(find(plan, Role::sched_switch), nullptr);
  EXPECT_TRUE(plan.unavailable.empty()) << "not asked for by name: notes, not errors";
  EXPECT_TRUE(std::any_of(plan.notes.begin(), plan.notes.end(),
                          [](auto& n) { return n.starts_with("sched: not recorded"); }));

  const AttrPlan root = plan_attrs(request("all", kRoot), known_ids);
  EXPECT_NE(find(root, Role::sched_switch), nullptr);
  EXPECT_NE(find(root, Role::block_issue), nullptr);
}

TEST(AttrPlan, ZeroHertzMeansNoSamples) {
  PlanOptions o = request("samples");
  o.sample_hz = 0;
  const AttrPlan plan = plan_attrs(o, known_ids);
  EXPECT_EQ(find(plan, Role::cpu_sample), nullptr);
  EXPECT_TRUE(mentions(plan.unavailable, "samples", "--sample-hz"));
}

}  // namespace
}  // namespace spoor::kernelsrc
