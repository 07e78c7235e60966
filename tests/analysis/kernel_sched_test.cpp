// The scheduler's and the block layer's machine-wide records (Spoor.Kernel
// SchedSwitch, SchedWaking, BlockRequest) and the Session settings, in a
// hand-built trace whose every figure is known.
#include <gtest/gtest.h>

#include "analysis_test_support.h"
#include "kernel_trace.h"
#include "spoor/analysis/kernel.h"
#include "spoor/analysis/kernel_block.h"
#include "spoor/analysis/kernel_sched.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;

constexpr uint32_t kDisk = 8u << 20;  // 8:0

// prog (pid 100, threads 100 and 101) among other tasks: "hog" (500),
// "other" (600), the idle task (0).
//   100 sleeps 1000..1800 (S), woken by 101 at 1500 while 500 runs on CPU 0
//       until 1800: waits 300 ns, 500 ran instead.
//   100 is preempted 2000..2700 by 600 (600 ns), then the CPU idles 100 ns.
//   101 sleeps in D 3000..4000 on CPU 1, woken by the idle task (tid 0) at
//       3900: waits 100 ns on an idle CPU; then sleeps 4100..4500, woken at
//       4400 by an interrupt that hit hog (500).
//   Block: 101 reads 4 KiB (3000 -> 3900), 500 writes 8 KiB (5000 -> 5500).
KernelTrace sched_trace() {
  KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.thread_start(100, 101, 2, 100);
  t.session(3, 997, "cpu-clock", "samples,sched,block");
  t.sched_switch(1000, 0, 100, "prog", 0x1, 500, "hog");
  t.sched_waking(1500, 1, 101, 100, "prog");
  t.sched_switch(1800, 0, 500, "hog", 0x100, 100, "prog");
  t.sched_switch(2000, 0, 100, "prog", 0x100, 600, "other");
  t.sched_switch(2600, 0, 600, "other", 0x1, 0, "swapper/0");
  t.sched_switch(2700, 0, 0, "swapper/0", 0, 100, "prog");
  t.block_request(3000, 101, kDisk, 100, 4096, "R", true);
  t.sched_switch(3000, 1, 101, "prog", 0x2, 0, "swapper/1");
  t.block_request(3900, 0, kDisk, 100, 4096, "R", false);
  t.sched_waking(3900, 1, 0, 101, "prog");
  t.sched_switch(4000, 1, 0, "swapper/1", 0, 101, "prog");
  t.sched_switch(4100, 1, 101, "prog", 0x1, 500, "hog");
  t.sched_waking(4400, 1, 500, 101, "prog", true);
  t.sched_switch(4500, 1, 500, "hog", 0x100, 101, "prog");
  t.block_request(5000, 500, kDisk, 200, 8192, "WS", true);
  t.block_request(5500, 0, kDisk, 200, 8192, "WS", false);
  t.tick(100, 100, 6000);
  return t;
}

const an::SchedThread* sched_thread(const an::SchedAnalysis& s, uint32_t tid) {
  for (const an::SchedThread& t : s.threads())
    if (t.tid == tid) return &t;
  return nullptr;
}

constexpr size_t kRunnable = 0, kSleeping = 1, kDiskSleep = 2;

TEST(KernelSched, PrevStateSplitsOffCpuTimeIntoRunnableSleepingAndDiskSleep) {
  EXPECT_EQ(an::off_cpu_reason(0), an::OffCpuReason::runnable);
  EXPECT_EQ(an::off_cpu_reason(0x100), an::OffCpuReason::runnable) << "TASK_REPORT_MAX: preempted";
  EXPECT_EQ(an::off_cpu_reason(0x1), an::OffCpuReason::sleeping);
  EXPECT_EQ(an::off_cpu_reason(0x2), an::OffCpuReason::disk_sleep);
  EXPECT_EQ(an::off_cpu_reason(0x4), an::OffCpuReason::other) << "stopped";

  an::SchedAnalysis s;
  KernelTrace t = sched_trace();
  load(t, {&s});
  ASSERT_TRUE(s.any());
  const an::SchedThread* main = sched_thread(s, 100);
  const an::SchedThread* worker = sched_thread(s, 101);
  ASSERT_NE(main, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(main->off_cpu_ns[kSleeping], 800);
  EXPECT_EQ(main->off_cpu_ns[kRunnable], 700);
  EXPECT_EQ(main->off_cpu_ns[kDiskSleep], 0);
  EXPECT_EQ(main->switches[kSleeping], 1u);
  EXPECT_EQ(main->switches[kRunnable], 1u);
  EXPECT_EQ(worker->off_cpu_ns[kDiskSleep], 1000);
  EXPECT_EQ(s.threads().size(), 2u) << "only the traced threads: not hog, other or the idle task";
  EXPECT_EQ(s.off_cpu().size(), 4u);
}

// A switch-in stamped before the thread's switch-out (records of two CPUs
// whose clocks or order disagree) is no negative time: it counts 0 ns, and
// is counted apart.
TEST(KernelSched, ASwitchInStampedBeforeItsSwitchOutCountsNoTime) {
  KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.session(3, 997, "cpu-clock", "samples,sched");
  t.sched_switch(1000, 0, 100, "prog", 0x1, 0, "swapper/0");
  t.sched_switch(1600, 1, 0, "swapper/1", 0, 100, "prog");  // 600 ns asleep
  t.sched_switch(2000, 1, 100, "prog", 0x1, 0, "swapper/1");
  t.sched_switch(1950, 0, 0, "swapper/0", 0, 100, "prog");  // read after, stamped earlier
  t.tick(100, 100, 3000);
  an::SchedAnalysis s;
  load(t, {&s});
  const an::SchedThread* main = sched_thread(s, 100);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->off_cpu_ns[kSleeping], 600);
  EXPECT_EQ(s.out_of_order(), 1u);
}

TEST(KernelSched, WakersAreCountedWhenTheWokenThreadRunsAgain) {
  an::SchedAnalysis s;
  KernelTrace t = sched_trace();
  load(t, {&s});
  const an::SchedThread* main = sched_thread(s, 100);
  const an::SchedThread* worker = sched_thread(s, 101);
  ASSERT_NE(main, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(main->wakeups, 1u) << "the preemption is no wakeup";
  ASSERT_EQ(main->wakers.size(), 1u);
  EXPECT_EQ(main->wakers[0].tid, 101u) << "its partner thread";
  EXPECT_EQ(main->wakers[0].count, 1u);
  EXPECT_EQ(main->wakers[0].comm, "prog");
  ASSERT_EQ(worker->wakers.size(), 2u);
  EXPECT_EQ(worker->wakers[0].tid, 0u) << "the idle task";
  EXPECT_EQ(worker->wakers[1].tid, an::kInterruptWaker) << "not hog, which the interrupt hit";
  EXPECT_EQ(worker->wakers[1].comm, "(interrupt)");
  ASSERT_EQ(s.wakeups().size(), 3u);
  EXPECT_EQ(s.wakeups()[0].woken_ns, 1500);
  EXPECT_EQ(s.wakeups()[0].run_ns, 1800);
  EXPECT_EQ(s.comm(500), "hog");
}

TEST(KernelSched, WhatRanInsteadIsTheCpusTasksWhileTheThreadWaitedToRun) {
  an::SchedAnalysis s;
  KernelTrace t = sched_trace();
  load(t, {&s});
  const an::SchedThread* main = sched_thread(s, 100);
  ASSERT_NE(main, nullptr);
  // Woken at 1500, ran at 1800 (hog ran); preempted 2000..2700 (other 600
  // ns, then idle 100 ns).
  EXPECT_EQ(main->waiting_ns, 300 + 700);
  ASSERT_EQ(main->ran_instead.size(), 3u);
  EXPECT_EQ(main->ran_instead[0].tid, 600u);
  EXPECT_EQ(main->ran_instead[0].ns, 600);
  EXPECT_EQ(main->ran_instead[0].comm, "other");
  EXPECT_EQ(main->ran_instead[1].tid, 500u);
  EXPECT_EQ(main->ran_instead[1].ns, 300);
  EXPECT_EQ(main->ran_instead[2].tid, 0u);
  EXPECT_EQ(main->ran_instead[2].ns, 100);
}

TEST(KernelBlock, RequestsBytesAndLatencyPerDeviceAndIssuer) {
  an::BlockAnalysis b;
  KernelTrace t = sched_trace();
  load(t, {&b});
  ASSERT_TRUE(b.any());
  const std::vector<an::BlockDevice> devices = b.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(an::device_name(devices[0].dev), "8:0");
  const an::BlockTally& d = devices[0].tally;
  EXPECT_EQ(d.requests, 2u);
  EXPECT_EQ(d.reads, 1u);
  EXPECT_EQ(d.writes, 1u);
  EXPECT_EQ(d.read_bytes, 4096u);
  EXPECT_EQ(d.write_bytes, 8192u);
  EXPECT_EQ(d.completed, 2u);
  EXPECT_EQ(d.total_ns, 900 + 500);
  EXPECT_EQ(d.max_ns, 900);
  const std::vector<an::BlockIssuer> issuers = b.issuers();
  ASSERT_EQ(issuers.size(), 2u);
  EXPECT_EQ(issuers[0].tid, 500u) << "most bytes first";
  EXPECT_EQ(issuers[1].tid, 101u) << "the issuing task, not the completion's (interrupt) context";
  EXPECT_EQ(issuers[1].tally.total_ns, 900);
  ASSERT_EQ(b.requests().size(), 2u);
  EXPECT_EQ(b.requests()[0].issue_ns, 3000);
  EXPECT_EQ(b.requests()[0].complete_ns, 3900);
}

// BlockDevice names devices as the recorder found them in sysfs; a device
// it did not name (one that appeared later, or any in an older trace)
// stays major:minor.
TEST(KernelBlock, DevicesAreNamedByTheirBlockDeviceEventElseMajorMinor) {
  an::BlockAnalysis b;
  KernelTrace t = sched_trace();
  t.block_device(3, kDisk, "sda");
  t.block_device(3, (259u << 20) | 1u, "nvme0n1p1");
  t.block_request(5600, 500, (8u << 20) | 16u, 300, 512, "W", true);  // 8:16, unnamed
  t.block_request(5700, 0, (8u << 20) | 16u, 300, 512, "W", false);
  load(t, {&b});
  EXPECT_EQ(b.name(kDisk), "sda");
  EXPECT_EQ(b.label(kDisk), "sda (8:0)");
  EXPECT_EQ(b.label((8u << 20) | 16u), "8:16");
  EXPECT_EQ(b.label((259u << 20) | 1u), "nvme0n1p1 (259:1)");

  an::BlockAnalysis old;
  KernelTrace o = sched_trace();
  load(o, {&old});
  EXPECT_EQ(old.label(kDisk), "8:0") << "no BlockDevice events: major:minor";
}

TEST(KernelSession, SamplerRateIsReadAndAbsentInOlderTraces) {
  an::KernelAnalysis k;
  KernelTrace t = sched_trace();
  load(t, {&k});
  EXPECT_TRUE(k.session().recorded);
  EXPECT_EQ(k.session().sample_hz, 997u);
  EXPECT_EQ(k.session().sample_event, "cpu-clock");
  EXPECT_EQ(k.session().sources, "samples,sched,block");

  an::KernelAnalysis old;
  KernelTrace o;
  o.process(100, 1, "prog", {"prog"});
  o.context_switch(100, 100, 10, true, false);
  load(o, {&old});
  EXPECT_TRUE(old.any());
  EXPECT_FALSE(old.session().recorded);
  EXPECT_EQ(old.session().sample_hz, 0u);
}

}  // namespace
