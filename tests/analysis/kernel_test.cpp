// Spoor.Kernel events (context switches, page faults, syscalls, lost
// records, samples) in hand-built traces whose every figure is known; and
// samples carrying registers and stack copies unwound while loading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "analysis_test_support.h"
#include "kernel_trace.h"
#include "sample_capture.h"
#include "spoor/analysis/cpu.h"
#include "spoor/analysis/kernel.h"
#include "spoor/analysis/symbolized_stacks.h"
#include "spoor/unwind/perf_regs.h"
#include "temp_dir.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;

// Samples the capture program took of itself (10, the chain with up to 2
// recursive frames: registers and stack copies, -fomit-frame-pointer) and
// a trace of its process, 400, with its modules that are files (no vDSO
// image here), ready for CpuSamples made from them.
struct CapturedProcess {
  Capture capture;
  KernelTrace trace;
};
CapturedProcess capture_process(const std::string& name) {
  CapturedProcess out;
  // One file per test process: ctest runs this binary's tests at once.
  const std::string path = spoor::test::test_temp_path(name + ".capture");
  EXPECT_EQ(std::system((std::string(SPOOR_CAPTURE_PROGRAM) + " " + path + " 10 2").c_str()), 0);
  EXPECT_TRUE(read_capture(path, out.capture));
  out.trace.process(400, 1, "capture", {"capture"});
  for (const auto& m : out.capture.modules)
    if (m.image.empty()) out.trace.module_load(400, 1, m.bias, m.start, m.size, m.path);
  return out;
}

// prog (pid 100, threads 100 and 101, preloaded: its module is known from
// ModuleLoad) and the kernel's view of it in the recorder's stream.
KernelTrace switches_faults_syscalls() {
  KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.thread_start(100, 101, 2, 100);
  // Thread 100: blocked 500 ns, preempted 100 ns.
  t.context_switch(100, 100, 1000, true, false);
  t.context_switch(100, 100, 1500, false, false);
  t.context_switch(100, 100, 2000, true, true);
  t.context_switch(100, 100, 2100, false, false);
  // Thread 101: blocked 1000 ns, then switched out for good.
  t.context_switch(100, 101, 3000, true, false);
  t.context_switch(100, 101, 4000, false, false);
  t.context_switch(100, 101, 5000, true, false);
  // Faults: three minor at one instruction, one major at another.
  for (uint64_t i = 0; i < 3; ++i) t.page_fault(100, 100, 5100 + i, 0x7f0000001000 + i * 4096, 0x401010, false);
  t.page_fault(100, 101, 5200, 0x7f0000100000, 0x402020, true);
  // read twice (one fails with -EAGAIN), write once.
  t.syscall(100, 100, 6000, 6300, 0, "read", 10);
  t.syscall(100, 100, 7000, 7100, 0, "read", -11);
  t.syscall(100, 101, 8000, 8050, 1, "write", 5);
  t.klost(8100, "samples", 7);
  // Samples with the kernel's callchain only.
  for (uint64_t i = 0; i < 3; ++i) t.cpu_sample(100, 100, 9000 + i, 0x401010, 0, {}, {}, {0x401010, 0x402020, 0x403030});
  return t;
}

const an::KernelThread* kthread(const an::KernelAnalysis& k, const an::TraceModel& m, uint32_t tid) {
  for (const an::KernelThread& t : k.threads())
    if (m.threads[t.thread].tid == tid) return &t;
  return nullptr;
}

TEST(Kernel, EventsCountForTheThreadTheyNameNotTheRecorder) {
  an::KernelAnalysis k;
  KernelTrace t = switches_faults_syscalls();
  Loaded l = load(t, {&k});
  ASSERT_TRUE(k.any());
  for (const an::KernelThread& th : k.threads()) EXPECT_EQ(l.model.threads[th.thread].pid, 100u);
  const an::ProcessInfo* recorder = l.model.process(1);
  ASSERT_NE(recorder, nullptr);
  EXPECT_TRUE(recorder->threads.size() <= 1) << "only the recorder's own thread";
}

TEST(Kernel, SwitchesSplitIntoBlockedAndPreemptedWithOffCpuTime) {
  an::KernelAnalysis k;
  KernelTrace t = switches_faults_syscalls();
  Loaded l = load(t, {&k});
  const an::KernelThread* main = kthread(k, l.model, 100);
  const an::KernelThread* worker = kthread(k, l.model, 101);
  ASSERT_NE(main, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(main->switches, 2u);
  EXPECT_EQ(main->blocked, 1u);
  EXPECT_EQ(main->preempted, 1u);
  EXPECT_EQ(main->off_cpu_ns, 600);
  EXPECT_EQ(worker->switches, 2u);
  EXPECT_EQ(worker->blocked, 2u);
  EXPECT_EQ(worker->off_cpu_ns, 1000) << "the last switch-out has no switch-in: no time";
  ASSERT_EQ(k.off_cpu().size(), 3u);
  EXPECT_EQ(k.off_cpu()[1].start_ns, 2000);
  EXPECT_EQ(k.off_cpu()[1].end_ns, 2100);
  EXPECT_TRUE(k.off_cpu()[1].preempted);
}

TEST(Kernel, FaultsPerThreadAndPerSite) {
  an::KernelAnalysis k;
  KernelTrace t = switches_faults_syscalls();
  Loaded l = load(t, {&k});
  EXPECT_EQ(k.minor_faults(), 3u);
  EXPECT_EQ(k.major_faults(), 1u);
  EXPECT_EQ(kthread(k, l.model, 100)->minor_faults, 3u);
  EXPECT_EQ(kthread(k, l.model, 101)->major_faults, 1u);
  const auto sites = k.fault_sites();
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].ip, 0x401010u);
  EXPECT_EQ(sites[0].minor, 3u);
  an::SymbolizedStacks symbols(l.model);
  EXPECT_EQ(symbols.frames_at(sites[0].image, sites[0].ip, false).front().function_or_location(), "prog+0x1010");
  ASSERT_EQ(k.faults().size(), 4u);
  EXPECT_EQ(k.faults()[3].address, 0x7f0000100000u);
}

TEST(Kernel, SyscallCountsErrorsAndDurations) {
  an::KernelAnalysis k;
  KernelTrace t = switches_faults_syscalls();
  Loaded l = load(t, {&k});
  ASSERT_EQ(k.syscalls().size(), 2u);
  const an::SyscallStats& read = k.syscalls()[0];
  EXPECT_EQ(read.name, "read");
  EXPECT_EQ(read.count, 2u);
  EXPECT_EQ(read.errors, 1u);
  EXPECT_EQ(read.total_ns, 400);
  EXPECT_EQ(read.max_ns, 300);
  EXPECT_EQ(k.syscalls()[1].name, "write");
  EXPECT_EQ(k.syscalls()[1].total_ns, 50);
  EXPECT_EQ(k.syscall_intervals().size(), 3u);
  EXPECT_EQ(k.lost().at("samples"), 7u);
}

// The calls a thread made wholly within the preloaded library's start
// (ShimStarted, written as it ends) are the library's: out of every count,
// counted apart; a call only it made leaves the table.
TEST(Kernel, SyscallsWithinThePreloadedLibrarysStartAreLeftOut) {
  an::KernelAnalysis k;
  KernelTrace t = switches_faults_syscalls();
  // Thread 100's start: 5500-5900, with a connect and a read in it; a read
  // on thread 101 meanwhile is the program's.
  t.syscall(100, 100, 5600, 5700, 42, "connect", 0);
  t.syscall(100, 100, 5750, 5850, 0, "read", -11);
  t.syscall(100, 101, 5760, 5770, 0, "read", 1);
  t.shim_started(100, 100, 5900, 400);
  Loaded l = load(t, {&k});
  std::map<std::string, an::SyscallStats> by_name;
  for (const an::SyscallStats& s : k.syscalls()) by_name[s.name] = s;
  EXPECT_EQ(by_name.count("connect"), 0u) << "only the library called it";
  ASSERT_EQ(by_name.count("read"), 1u);
  EXPECT_EQ(by_name["read"].count, 3u) << "thread 100's two after its start, thread 101's";
  EXPECT_EQ(by_name["read"].errors, 1u);
  EXPECT_EQ(by_name["read"].total_ns, 410);
  EXPECT_EQ(by_name["read"].max_ns, 300);
  EXPECT_EQ(by_name["write"].total_ns, 50);
  EXPECT_EQ(k.shim_syscalls().count, 2u);
  EXPECT_EQ(k.shim_syscalls().total_ns, 200);
  EXPECT_EQ(k.shim_syscalls().starts, 1u);
  EXPECT_EQ(k.syscall_intervals().size(), 4u);
  for (const an::SyscallInterval& i : k.syscall_intervals())
    EXPECT_EQ(k.syscalls()[i.syscall].name, i.start_ns == 8000 ? "write" : "read") << i.start_ns;
  EXPECT_EQ(kthread(k, l.model, 100)->syscalls, 2u);
  EXPECT_EQ(kthread(k, l.model, 101)->syscalls, 2u);
}

// The kernel's sys_exit after rt_sigreturn carries nr -1 (it reads the
// number from the registers the call restored), and exit_group has no
// exit at all: each is still one call of its own name.
TEST(Kernel, SigreturnAndExitGroupAreCountedUnderTheirNames) {
  KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  auto enter = [&](uint64_t at, uint32_t nr, const std::string& name) { t.syscall_enter(100, 100, at, nr, name); };
  auto exit = [&](uint64_t at, uint32_t nr, const std::string& name, int64_t ret) {
    t.syscall_exit(100, 100, at, nr, name, ret);
  };
  exit(500, 61, "wait4", 101);  // its enter was before the recording
  enter(1000, 15, "rt_sigreturn");
  exit(1040, an::kUnknownSyscallNr, "", -11);  // the interrupted read's -EAGAIN, restored
  exit(1100, an::kUnknownSyscallNr, "", 0);    // no pending enter: no call to name
  t.syscall(100, 100, 2000, 2300, 0, "read", -11);
  enter(3000, 231, "exit_group");
  an::KernelAnalysis k;
  Loaded l = load(t, {&k});
  std::map<std::string, an::SyscallStats> by_name;
  for (const an::SyscallStats& s : k.syscalls()) by_name[s.name] = s;
  ASSERT_EQ(by_name.size(), 4u) << "no entry for nr -1";
  EXPECT_EQ(by_name["rt_sigreturn"].count, 1u);
  EXPECT_EQ(by_name["rt_sigreturn"].errors, 0u);
  EXPECT_EQ(by_name["rt_sigreturn"].total_ns, 40);
  EXPECT_EQ(by_name["exit_group"].count, 1u);
  EXPECT_EQ(by_name["exit_group"].total_ns, 0);
  EXPECT_EQ(by_name["wait4"].count, 1u);
  EXPECT_EQ(by_name["wait4"].total_ns, 0);
  EXPECT_EQ(by_name["read"].count, 1u);
  EXPECT_EQ(by_name["read"].errors, 1u);
  EXPECT_EQ(by_name["read"].total_ns, 300);
  EXPECT_EQ(k.syscall_intervals().size(), 2u);
}

TEST(Kernel, SamplesWithOnlyACallchainFormTheKernelProfile) {
  an::CpuAnalysis preload;
  an::CpuAnalysis kernel(an::SampleSource::kernel);
  KernelTrace t = switches_faults_syscalls();
  Loaded l = load(t, {&preload, &kernel});
  EXPECT_EQ(preload.periods(), 0u) << "kernel samples are not the preload sampler's";
  EXPECT_EQ(kernel.periods(), 3u);
  EXPECT_EQ(l.model.kernel_unwind.frame_pointer, 3u);
  an::SymbolizedStacks symbols(l.model);
  const an::CpuProfile p = kernel.profile(symbols);
  ASSERT_FALSE(p.functions.empty());
  EXPECT_EQ(p.functions[0].function, "prog+0x1010");
  EXPECT_EQ(p.functions[0].self, 3u);
  ASSERT_EQ(kernel.stacks().size(), 1u) << "identical stacks share one key";
  EXPECT_EQ(symbols.frames(kernel.stacks()[0].stack, an::StackUse::sample).size(), 3u);
}

// Samples taken in the kernel: their kernel frames come before the user
// stack, named by the trace's KernelSymbol events, each named by the
// function whose start is the nearest below it; faults the kernel took
// with no user frame are named the same way.
TEST(Kernel, KernelFramesAreNamedByTheTracesKernelSymbols) {
  KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  const std::vector<uint64_t> kernel_chain{0xffffffff81004010, 0xffffffff81001234};  // copy, under the read call
  for (uint64_t i = 0; i < 4; ++i)
    t.cpu_sample(100, 100, 1000 + i, 0xffffffff81004010, 0, {}, {}, {0x401010, 0x402020}, {}, kernel_chain);
  t.cpu_sample(100, 100, 1010, 0x401010, 0, {}, {}, {0x401010, 0x402020});  // in user space
  t.page_fault(100, 100, 1020, 0x7f0000001000, 0xffffffffc0001040, false);   // in a module, no user frame
  t.kernel_symbol(2000, 0xffffffff81001000, "ksys_read");
  t.kernel_symbol(2000, 0xffffffff81004000, "copy_page_to_iter");
  t.kernel_symbol(2000, 0xffffffffc0001000, "ext4_file_read_iter", "ext4");
  an::CpuAnalysis kernel(an::SampleSource::kernel);
  an::KernelAnalysis k;
  Loaded l = load(t, {&kernel, &k});
  ASSERT_EQ(l.model.kernel_symbols.size(), 3u);
  EXPECT_EQ(l.model.kernel_unwind.in_kernel, 4u) << "the samples with kernel frames";
  an::SymbolizedStacks symbols(l.model);
  const an::CpuProfile p = kernel.profile(symbols);
  ASSERT_GE(p.functions.size(), 3u);
  EXPECT_EQ(p.functions[0].function, "copy_page_to_iter [kernel]");
  EXPECT_EQ(p.functions[0].self, 4u);
  bool read_call = false, user = false;
  for (const an::FunctionCost& f : p.functions) {
    read_call |= f.function == "ksys_read [kernel]" && f.self == 0 && f.inclusive == 4;
    user |= f.function == "prog+0x1010" && f.self == 1 && f.inclusive == 5;
  }
  EXPECT_TRUE(read_call) << "the caller in the kernel, inclusive only";
  EXPECT_TRUE(user) << "the user frame under both";
  const std::vector<an::FaultSite> sites = k.fault_sites();
  ASSERT_EQ(sites.size(), 1u);
  const std::vector<an::Frame> frames = symbols.frames_at(sites[0].image, sites[0].ip, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "ext4_file_read_iter [ext4]");
  EXPECT_EQ(frames[0].symbol_offset, 0x40u);
}

// A trace without KernelSymbol events (recorded before them, or where
// kallsyms hid its addresses): a sample's kernel frames are one "[kernel]"
// frame, the time the kernel's under the user call that entered it.
TEST(Kernel, UnnamedKernelFramesAreOneKernelFrame) {
  KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  for (uint64_t i = 0; i < 2; ++i)
    t.cpu_sample(100, 100, 1000 + i, 0xffffffff81004010, 0, {}, {}, {0x401010, 0x402020}, {},
                 {0xffffffff81004010, 0xffffffff81001234, 0xffffffff81000100});
  an::CpuAnalysis kernel(an::SampleSource::kernel);
  Loaded l = load(t, {&kernel});
  an::SymbolizedStacks symbols(l.model);
  ASSERT_EQ(kernel.stacks().size(), 1u);
  const std::vector<an::Frame>& frames = symbols.frames(kernel.stacks()[0].stack, an::StackUse::sample);
  ASSERT_EQ(frames.size(), 3u) << "[kernel], then the two user frames";
  EXPECT_EQ(frames[0].function, "[kernel]");
  EXPECT_EQ(frames[1].function_or_location(), "prog+0x1010");
  const an::CpuProfile p = kernel.profile(symbols);
  EXPECT_EQ(p.functions[0].function, "[kernel]");
  EXPECT_EQ(p.functions[0].self, 2u);
}

extern "C" __attribute__((noinline)) int kernel_test_marker(int x) { return x * 3 + 1; }

// A --no-preload trace: the program's module comes from the kernel's mmap
// record of this very test binary (a real file, so its bias is computed
// from its program headers and its symbols resolve).
TEST(Kernel, MmapRecordsAreTheModulesWithoutPreload) {
  const std::string self = own_exe();
  ASSERT_FALSE(self.empty());
  KernelTrace t;
  t.comm(200, 200, 5, "kernel_only", true);
  bool mapped = false;
  for (const FileMapping& m : own_exe_mappings()) {
    t.mmap(200, 10, m.start, m.end - m.start, m.pgoff, m.executable ? 5 : 1, self);
    mapped = mapped || m.executable;
  }
  ASSERT_TRUE(mapped);
  const auto marker = reinterpret_cast<uint64_t>(&kernel_test_marker);
  t.cpu_sample(200, 200, 20, marker + 1, 0, {}, {}, {marker + 1});
  an::CpuAnalysis kernel(an::SampleSource::kernel);
  Loaded l = load(t, {&kernel});
  const an::ProcessInfo* p = l.model.process(200);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "kernel_only");
  ASSERT_EQ(p->images.size(), 1u) << "the exec that started it opens no second image";
  EXPECT_EQ(l.model.images[p->images[0]].modules.size(), 1u) << "only the executable mapping";
  an::SymbolizedStacks symbols(l.model);
  const an::CpuProfile prof = kernel.profile(symbols);
  ASSERT_EQ(prof.functions.size(), 1u);
  EXPECT_EQ(prof.functions[0].function, "kernel_test_marker");
}

// Without the preload only the kernel sees a child end: its main thread's
// Exit record, with exit_group's status where syscalls were recorded (a
// waiting parent's low 8 bits), "how unknown" where not. A thread's exit
// ends no process; an ending the recorder reaped keeps its own word.
TEST(Kernel, AProcessOnlyTheKernelSawEndEndsWithItsExitGroupStatus) {
  KernelTrace t;
  t.comm(700, 700, 5, "parent", true);
  t.kfork(701, 701, 10, 700, 700);
  t.syscall_enter(701, 701, 20, 231, "exit_group", {0x1ff});
  t.kexit(701, 701, 21);
  t.kfork(702, 702, 30, 700, 700);
  t.kfork(702, 703, 35, 702, 702);
  t.kexit(702, 703, 38);  // a thread of 702
  t.kexit(702, 702, 40);  // killed: no exit_group
  t.kfork(704, 704, 50, 700, 700);
  t.tick(704, 704, 55);
  // The recorder's word at the end: 704 still runs; 702's pid belongs to
  // a process the trace never saw (702 had ended).
  t.process_running(1, 60, 704);
  t.process_running(1, 60, 702);
  Loaded l = load(t);
  const an::ProcessInfo* exited = l.model.process(701);
  ASSERT_NE(exited, nullptr);
  ASSERT_TRUE(exited->end.has_value());
  EXPECT_TRUE(exited->end->how_known);
  EXPECT_EQ(exited->end->exit_code, 0xff);
  EXPECT_EQ(exited->end->time_ns, 21);
  const an::ProcessInfo* killed = l.model.process(702);
  ASSERT_NE(killed, nullptr);
  ASSERT_TRUE(killed->end.has_value());
  EXPECT_FALSE(killed->end->how_known);
  EXPECT_EQ(killed->end->time_ns, 40) << "the main thread's exit, not the other thread's";
  EXPECT_FALSE(killed->running_at_end) << "its pid running at the end is another process";
  const an::ProcessInfo* running = l.model.process(704);
  ASSERT_NE(running, nullptr);
  EXPECT_FALSE(running->end.has_value()) << "no Exit record: no end";
  EXPECT_TRUE(running->running_at_end);
  EXPECT_EQ(running->end_ns, 60) << "it ran until the recording's end";
  EXPECT_FALSE(l.model.process(700)->end.has_value());
}

// An exec only the kernel saw names its image by the Comm record, and by
// the first mapped file whose name begins with it: the program, not its
// interpreter. A script's interpreter, mapped under another name, is not
// taken for it.
TEST(Kernel, AnImageOnlyTheKernelSawIsNamedByItsCommAndItsProgramsFile) {
  KernelTrace t;
  t.comm(800, 800, 5, "a-very-long-pro", true);  // comm: 15 bytes of the file's name
  t.mmap(800, 6, 0x400000, 0x1000, 0, 5, "/opt/bin/a-very-long-program-name");
  t.mmap(800, 7, 0x7f0000000000, 0x1000, 0, 5, "/lib64/ld-linux-x86-64.so.2");
  t.kfork(801, 801, 10, 800, 800);
  t.comm(801, 801, 11, "myscript.sh", true);
  t.mmap(801, 12, 0x500000, 0x1000, 0, 5, "/usr/bin/dash");
  Loaded l = load(t);
  const an::ProcessInfo* p = l.model.process(800);
  ASSERT_NE(p, nullptr);
  const an::Image& program = l.model.images[p->images.back()];
  EXPECT_EQ(program.comm, "a-very-long-pro");
  EXPECT_EQ(program.exe, "/opt/bin/a-very-long-program-name");
  const an::ProcessInfo* script = l.model.process(801);
  ASSERT_NE(script, nullptr);
  const an::Image& ran = l.model.images[script->images.back()];
  EXPECT_EQ(ran.comm, "myscript.sh");
  EXPECT_EQ(ran.exe, "") << "dash is the script's interpreter, not a file of its name";
}

TEST(Kernel, ForkedProcessKeepsItsParentsModules) {
  KernelTrace t;
  t.mmap(300, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
  t.kfork(301, 301, 20, 300, 300);
  t.cpu_sample(301, 301, 30, 0x400010, 0, {}, {}, {0x400010});
  t.kfork(300, 302, 40, 300, 300);  // a thread: no new process
  Loaded l = load(t);
  const an::ProcessInfo* child = l.model.process(301);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->ppid, 300u);
  EXPECT_EQ(l.model.images[child->images.back()].modules.size(), 1u);
  EXPECT_EQ(l.model.process(300)->forked, std::vector<uint32_t>{301});
}

// The kernel's exec Comm record comes before execve returns: a sample in
// between has the old image's registers (pc in its libc's execve) and no
// stack copy. It counts for the image before the exec; a sample of the new
// image's code after it, for the new one.
TEST(Kernel, ASampleInExecvesTailBelongsToTheImageBefore) {
  KernelTrace t;
  t.comm(600, 600, 5, "old", true);
  t.mmap(600, 6, 0x7f0000000000, 0x1000, 0, 5, "/nonexistent/libc-old");
  t.comm(600, 600, 20, "new", true);
  t.mmap(600, 21, 0x500000, 0x1000, 0, 5, "/nonexistent/new");
  std::vector<uint64_t> regs;
  auto sample_at = [&](uint64_t time, uint64_t pc) {
    regs.clear();
    for (unsigned bit = 0; bit < 64; ++bit)
      if (spoor::unwind::kPerfRegsDwarfMask >> bit & 1)
        regs.push_back(bit == spoor::unwind::kPerfIp ? pc : bit == spoor::unwind::kPerfSp ? 0x7ffd0000 : 0);
    t.cpu_sample(600, 600, time, 0xffffffff81000000, spoor::unwind::kPerfRegsDwarfMask, regs, {}, {});
  };
  sample_at(30, 0x7f0000000010);
  sample_at(40, 0x500010);
  struct SampleImages : an::EventVisitor {
    std::vector<an::ImageIndex> images;
    void on_event(const spoor::reader::Event&, const an::EventContext& c) override {
      if (c.known->kind == an::EventKind::kernel_sample) images.push_back(c.image);
    }
  } seen;
  Loaded l = load(t, {&seen});
  const an::ProcessInfo* p = l.model.process(600);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->images.size(), 2u);
  EXPECT_EQ(seen.images, (std::vector<an::ImageIndex>{p->images[0], p->images[1]}));
}

// Samples the capture program took of itself (registers + stack copies,
// -fomit-frame-pointer chain) as Spoor.Kernel CpuSamples of a preloaded
// process: the loader unwinds them with DWARF, and the kernel profile has
// the chain's functions and main.
TEST(Kernel, SampledStacksAreUnwoundWhileLoading) {
  auto [c, t] = capture_process("kernel_test");
  ASSERT_FALSE(c.samples.empty());
  uint64_t time = 10;
  for (const CapturedSample& s : c.samples)
    t.cpu_sample(400, 400, ++time, s.regs[spoor::unwind::kPerfIp], s.mask, s.regs, s.stack, {});
  an::CpuAnalysis kernel(an::SampleSource::kernel);
  Loaded l = load(t, {&kernel});
  EXPECT_EQ(l.model.kernel_unwind.dwarf, c.samples.size());
  EXPECT_TRUE(l.model.kernel_unwind.stops.empty());
  an::SymbolizedStacks symbols(l.model);
  const an::CpuProfile p = kernel.profile(symbols);
  auto inclusive = [&](const std::string& name) -> uint64_t {
    for (const an::FunctionCost& f : p.functions)
      if (f.function == name) return f.inclusive;
    return 0;
  };
  EXPECT_EQ(inclusive("main"), c.samples.size());
  EXPECT_GE(inclusive("offline_chain_a"), c.samples.size() * 3 / 4);
  EXPECT_GE(inclusive("offline_spin_leaf"), c.samples.size() * 3 / 4);
}

// The same samples with only the first 8 bytes of their stack copies: the
// walks end at the copy's end, and the summary counts them apart from
// other stops, with the largest copy seen (what the report's hint reads).
TEST(Kernel, WalksEndingAtTheStackCopysEndAreCounted) {
  auto [c, t] = capture_process("kernel_test_short");
  ASSERT_FALSE(c.samples.empty());
  uint64_t time = 10;
  for (const CapturedSample& s : c.samples) {
    const Bytes first(s.stack.begin(), s.stack.begin() + std::min<size_t>(8, s.stack.size()));
    t.cpu_sample(400, 400, ++time, s.regs[spoor::unwind::kPerfIp], s.mask, s.regs, first, {});
  }
  Loaded l = load(t);
  const an::KernelUnwindSummary& u = l.model.kernel_unwind;
  EXPECT_EQ(u.dwarf, c.samples.size());
  EXPECT_GE(u.stack_copy_short, c.samples.size() * 3 / 4) << "offline_spin_leaf's caller is beyond 8 bytes";
  EXPECT_LE(u.stack_copy_short, c.samples.size());
  EXPECT_EQ(u.largest_stack_copy, 8u);
}

// The same samples with each stack copy split over stack, stack_2 and
// stack_3, as the recorder splits a copy longer than one Blob holds: the
// loader joins them and unwinds each as one copy, to main, with no walk
// stopped short (a walk of `stack` alone would end after 64 bytes).
TEST(Kernel, AStackCopySplitOverContinuationFieldsUnwindsAsOne) {
  auto [c, t] = capture_process("kernel_test_split");
  ASSERT_FALSE(c.samples.empty());
  uint64_t time = 10;
  size_t largest = 0;
  for (const CapturedSample& s : c.samples) {
    ASSERT_GT(s.stack.size(), 128u);
    const auto at = [&](size_t n) { return s.stack.begin() + static_cast<std::ptrdiff_t>(n); };
    const Bytes first(s.stack.begin(), at(64)), second(at(64), at(128)), rest(at(128), s.stack.end());
    t.cpu_sample(400, 400, ++time, s.regs[spoor::unwind::kPerfIp], s.mask, s.regs, first, {}, {second, rest});
    largest = std::max(largest, s.stack.size());
  }
  an::CpuAnalysis kernel(an::SampleSource::kernel);
  Loaded l = load(t, {&kernel});
  const an::KernelUnwindSummary& u = l.model.kernel_unwind;
  EXPECT_EQ(u.dwarf, c.samples.size());
  EXPECT_EQ(u.stack_copy_short, 0u);
  EXPECT_TRUE(u.stops.empty());
  EXPECT_EQ(u.largest_stack_copy, largest) << "the joined copy, not its first field";
  an::SymbolizedStacks symbols(l.model);
  const an::CpuProfile p = kernel.profile(symbols);
  uint64_t main_inclusive = 0;
  for (const an::FunctionCost& f : p.functions)
    if (f.function == "main") main_inclusive = f.inclusive;
  EXPECT_EQ(main_inclusive, c.samples.size());
}

}  // namespace
