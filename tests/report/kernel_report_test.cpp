// spoor report --kernel and spoor export on a hand-built trace with
// Spoor.Kernel events exactly as the schema gives them: the kernel
// section's figures, the off-CPU slices and page-fault instants in the
// Perfetto (read back with protoc --decode_raw) and Chrome JSON exports;
// and spoor record --kernel end to end on a program without frame pointers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "decoded_proto.h"
#include "kernel_trace.h"
#include "perf_access.h"
#include "run_command.h"

namespace {

using nlohmann::json;
using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;

// prog (pid 100, threads 100 and 101). Thread 100: blocked 500 ns and
// preempted 100 ns, three minor faults, two reads (one fails); thread 101:
// blocked 1000 ns, one major fault, one write. 7 samples lost; 3 samples
// with the kernel's callchain.
// `t` written to a temporary file named `name`; its path.
std::string written(spoor::testing::KernelTrace& t, const std::string& name) {
  const std::string path = spoor::test::temp_path(name);
  t.save(path);
  return path;
}

// The "functions where page faults hit" rows of `spoor report --kernel
// --format json` for the trace at `path`.
json fault_functions(const std::string& path) {
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  EXPECT_EQ(p.status, 0) << p.err;
  if (p.status != 0) return json::array();
  return json::parse(p.out)["kernel"]["faults"]["top_functions"];
}

std::string kernel_trace_file(const std::string& name) {
  spoor::testing::KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.thread_start(100, 101, 2, 100);
  t.context_switch(100, 100, 1000, true, false);
  t.context_switch(100, 100, 1500, false, false);
  t.context_switch(100, 100, 2000, true, true);
  t.context_switch(100, 100, 2100, false, false);
  t.context_switch(100, 101, 3000, true, false);
  t.context_switch(100, 101, 4000, false, false);
  for (uint64_t i = 0; i < 3; ++i) t.page_fault(100, 100, 5100 + i, 0x7f0000001000 + i * 4096, 0x401010, false);
  t.page_fault(100, 101, 5200, 0x7f0000100000, 0x402020, true);
  t.syscall(100, 100, 6000, 6300, 0, "read", 10);
  t.syscall(100, 100, 7000, 7100, 0, "read", -11);
  t.syscall(100, 101, 8000, 8050, 1, "write", 5);
  t.klost(8100, "samples", 7);
  for (uint64_t i = 0; i < 3; ++i) t.cpu_sample(100, 100, 9000 + i, 0x401010, 0, {}, {}, {0x401010, 0x402020, 0x403030});
  t.tick(100, 100, 10000);
  return written(t, name);
}

const json* thread_of(const json& threads, uint32_t tid) {
  for (const json& t : threads)
    if (t["tid"] == tid) return &t;
  return nullptr;
}

// A fault the kernel took touching user memory for a system call (read()
// filling its buffer) has the kernel's instruction: the report names the
// user-space call that got it there, the callchain's first frame (a return
// address), rather than an unnamed kernel address.
TEST(KernelReport, FaultsTakenInTheKernelAreNamedByTheCallThatGotThemThere) {
  spoor::testing::KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  constexpr uint64_t kKernelCopy = 0xffffffff81baf6b0;  // _copy_to_iter, say
  for (uint64_t i = 0; i < 2; ++i)
    t.page_fault(100, 100, 5100 + i, 0x7f0000001000 + i * 4096, kKernelCopy, false, {0x403031});
  t.page_fault(100, 100, 5200, 0x7f0000100000, kKernelCopy, false);  // no user frame: left as it is
  t.page_fault(100, 100, 5300, 0x7f0000200000, 0x401010, false);
  t.tick(100, 100, 10000);
  const std::string path = written(t, "kernel-faults-in-kernel.spoor");
  const json functions = fault_functions(path);
  ASSERT_EQ(functions.size(), 3u) << functions.dump(1);
  EXPECT_EQ(functions[0]["function"], "[kernel] under prog+0x3031") << "the call site, by its return address";
  EXPECT_EQ(functions[0]["minor"], 2u);
  bool user_fault = false, bare_kernel = false;
  for (const json& f : functions) {
    user_fault |= f["function"] == "prog+0x1010";
    bare_kernel |= f["function"].get<std::string>().find("0xffffffff81baf6b0") != std::string::npos;
  }
  EXPECT_TRUE(user_fault) << functions.dump(1);
  EXPECT_TRUE(bare_kernel) << functions.dump(1);
  const Process text = run(kSpoor + " report --kernel " + path);
  EXPECT_NE(text.out.find("[kernel] under prog+0x3031"), std::string::npos) << text.out;
  std::remove(path.c_str());
}

// With the kernel's functions named in the trace (KernelSymbol), a fault
// taken in the kernel for a call names both: the kernel function and the
// call; one with no user frame, the kernel function alone.
TEST(KernelReport, FaultsTakenInTheKernelNameTheKernelFunctionWhereTheTraceHasIt) {
  spoor::testing::KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  for (uint64_t i = 0; i < 3; ++i)
    t.page_fault(100, 100, 5100 + i, 0x7f0000001000 + i * 4096, 0xffffffff81baf6b0, false, {0x403031});
  t.page_fault(100, 100, 5150, 0x7f0000009000, 0xffffffff81c00010, false, {0x403031});  // another kernel function
  t.page_fault(100, 100, 5200, 0x7f0000100000, 0xffffffff81baf6c0, false);              // no user frame
  t.kernel_symbol(9000, 0xffffffff81baf600, "_copy_to_iter");
  t.kernel_symbol(9000, 0xffffffff81c00000, "clear_user_erms");
  t.tick(100, 100, 10000);
  const std::string path = written(t, "kernel-faults-named.spoor");
  const json functions = fault_functions(path);
  ASSERT_EQ(functions.size(), 3u) << functions.dump(1);
  EXPECT_EQ(functions[0]["function"], "_copy_to_iter [kernel] under prog+0x3031");
  EXPECT_EQ(functions[0]["minor"], 3u);
  bool other = false, bare = false;
  for (const json& f : functions) {
    other |= f["function"] == "clear_user_erms [kernel] under prog+0x3031" && f["minor"] == 1u;
    bare |= f["function"] == "_copy_to_iter [kernel]" && f["minor"] == 1u;
  }
  EXPECT_TRUE(other) << functions.dump(1);
  EXPECT_TRUE(bare) << functions.dump(1);
  std::remove(path.c_str());
}

TEST(KernelReport, SectionHasTheKnownSwitchFaultAndSyscallFigures) {
  const std::string path = kernel_trace_file("kernel-report.spoor");
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json r = json::parse(p.out);
  ASSERT_TRUE(r.contains("kernel"));
  const json& k = r["kernel"];
  EXPECT_EQ(k["switches"]["switches"], 3u);
  EXPECT_EQ(k["switches"]["blocked"], 2u);
  EXPECT_EQ(k["switches"]["preempted"], 1u);
  EXPECT_EQ(k["switches"]["off_cpu_ns"], 1600);
  const json* main = thread_of(k["threads"], 100);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ((*main)["off_cpu_ns"], 600);
  EXPECT_EQ((*main)["minor_faults"], 3u);
  EXPECT_EQ((*main)["syscalls"], 2u);
  EXPECT_EQ((*main)["samples"], 3u);
  EXPECT_EQ((*main)["pid"], 100u) << "the thread the event names, not the recorder's";
  EXPECT_EQ(k["threads"][0]["tid"], 101u) << "most time off the CPU first";
  EXPECT_EQ(k["faults"]["minor"], 3u);
  EXPECT_EQ(k["faults"]["major"], 1u);
  EXPECT_EQ(k["faults"]["top_functions"][0]["function"], "prog+0x1010");
  EXPECT_EQ(k["faults"]["top_functions"][0]["minor"], 3u);
  ASSERT_EQ(k["syscalls"].size(), 2u);
  EXPECT_EQ(k["syscalls"][0]["name"], "read");
  EXPECT_EQ(k["syscalls"][0]["count"], 2u);
  EXPECT_EQ(k["syscalls"][0]["errors"], 1u);
  EXPECT_EQ(k["syscalls"][0]["total_ns"], 400);
  EXPECT_EQ(k["syscalls"][0]["max_ns"], 300);
  EXPECT_EQ(k["cpu"]["samples"], 3u);
  EXPECT_EQ(k["cpu"]["unwound"]["frame_pointer"], 3u);
  EXPECT_EQ(k["cpu"]["functions"][0]["function"], "prog+0x1010");
  EXPECT_EQ(k["lost"][0]["source"], "samples");
  EXPECT_EQ(k["lost"][0]["count"], 7u);
  EXPECT_EQ(r["health"]["kernel_lost"][0]["count"], 7u) << "with the other lost counts";

  const Process text = run(kSpoor + " report " + path);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("Kernel (perf_event_open records)"), std::string::npos) << "shown by default: " << text.out;
  EXPECT_NE(text.out.find("context switches: 3 (2 blocked, 1 preempted)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("page faults: 3 minor, 1 major"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("kernel records (samples): 7 lost"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

// The preload's ModuleLoad and the kernel's mmap records of one file, its
// two segments mapped apart, are one module of the image.
// The kernel counts the preloaded library's own calls with the program's
// (strace -c of the program alone counts fewer): said where a traced
// image (a ProcessStart) shows the library was there, not without it.
TEST(KernelReport, SyscallsOfAPreloadedProcessAreSaidToIncludeTheLibrarys) {
  for (const bool preloaded : {true, false}) {
    spoor::testing::KernelTrace t;
    t.process(100, 1, "prog", {"prog"});
    if (preloaded) t.process_start(100, 500, 1, 0, "/nonexistent/prog");
    t.syscall(100, 100, 6000, 6300, 0, "read", 10);
    t.tick(100, 100, 10000);
    const std::string path = written(t, preloaded ? "kernel-syscalls-shim.spoor" : "kernel-syscalls-alone.spoor");
    const Process p = run(kSpoor + " report --kernel --format json " + path);
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(json::parse(p.out)["kernel"]["syscalls_include_preload"], preloaded);
    const Process text = run(kSpoor + " report --kernel " + path);
    EXPECT_EQ(text.out.find("these include the calls Spoor's preloaded library makes") != std::string::npos, preloaded)
        << text.out;
    std::remove(path.c_str());
  }
}

TEST(KernelReport, AModuleMappedByBothSourcesCountsOnce) {
  spoor::testing::KernelTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.mmap(100, 2, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
  t.mmap(100, 3, 0x401000, 0x1000, 0x1000, 5, "/nonexistent/prog");
  t.module_load(100, 4, 0x7f0000000000, 0x7f0000000000, 0x10000, "/nonexistent/libx.so");
  t.tick(100, 100, 10);
  const std::string path = spoor::test::temp_path("kernel-modules.spoor");
  t.save(path);
  const Process p = run(kSpoor + " report --threads --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json r = json::parse(p.out);
  ASSERT_EQ(r["processes"].size(), 1u) << p.out;
  EXPECT_EQ(r["processes"][0]["images"][0]["modules"], 2u) << "prog and libx.so";
  std::filesystem::remove(path);
}

TEST(KernelReport, NoKernelSectionWithoutKernelEvents) {
  spoor::testing::SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.tick(100, 100, 10);
  const std::string path = spoor::test::temp_path("no-kernel.spoor");
  t.save(path);
  const Process p = run(kSpoor + " report " + path);
  EXPECT_EQ(p.out.find("Kernel"), std::string::npos) << p.out;
  std::filesystem::remove(path);
}

std::string exported(const std::string& trace, const std::string& format) {
  const std::string out = spoor::test::temp_path("kernel-export." + format);
  const Process p = run(kSpoor + " export " + trace + " --format " + format + " -o " + out);
  EXPECT_EQ(p.status, 0) << p.err;
  std::string bytes = spoor::test::read_file(out);
  std::remove(out.c_str());
  return bytes;
}

TEST(KernelExport, PerfettoShowsOffCpuSlicesAndPageFaults) {
  if (!spoor::test::have_program("protoc")) GTEST_SKIP() << "protoc is not installed";
  const std::string path = kernel_trace_file("kernel-export.spoor");
  std::string error;
  const spoor::test::ProtoNode root = spoor::test::decode_raw(exported(path, "perfetto"), error);
  ASSERT_TRUE(error.empty()) << error;
  // (name, type, timestamp) of every track event.
  struct Ev {
    std::string name;
    std::string type;
    int64_t ts;
    std::string track;
  };
  std::vector<Ev> events;
  for (const spoor::test::ProtoNode* packet : root.all(1)) {
    const spoor::test::ProtoNode* e = packet->first(11);
    if (e == nullptr) continue;
    events.push_back({e->scalar(23), e->scalar(9), std::stoll(packet->scalar(8)), e->scalar(11)});
  }
  auto begins = [&](const std::string& name) {
    std::vector<const Ev*> out;
    for (const Ev& e : events)
      if (e.name == "\"" + name + "\"" && e.type == "1") out.push_back(&e);
    return out;
  };
  EXPECT_EQ(begins("off-CPU (blocked)").size(), 2u);
  const auto preempted = begins("off-CPU (preempted)");
  ASSERT_EQ(preempted.size(), 1u);
  // Its end: the next slice end on the same track (nothing nests in it).
  int64_t end = -1;
  for (const Ev& e : events)
    if (e.type == "2" && e.track == preempted[0]->track && e.ts >= preempted[0]->ts) {
      end = e.ts;
      break;
    }
  EXPECT_EQ(end - preempted[0]->ts, 100) << "from switch-out to switch-in";
  size_t faults = 0;
  for (const Ev& e : events)
    if (e.name.find("minor page fault at 0x7f0000") != std::string::npos && e.type == "3") ++faults;
  EXPECT_EQ(faults, 3u);
  EXPECT_EQ(begins("read").size(), 2u) << "system calls are slices too";
  // The kernel's samples as PerfSamples of the thread they name, each with
  // its (callchain) stack.
  size_t samples = 0;
  for (const spoor::test::ProtoNode* packet : root.all(1)) {
    const spoor::test::ProtoNode* s = packet->first(66);
    if (s == nullptr) continue;
    ++samples;
    EXPECT_EQ(s->scalar(2), "100");
    EXPECT_EQ(s->scalar(3), "100");
    EXPECT_NE(s->scalar(4), "<none>") << "a callstack";
  }
  EXPECT_EQ(samples, 3u);
  std::filesystem::remove(path);
}

TEST(KernelExport, ChromeJsonAndFoldedUseTheKernelEvents) {
  const std::string path = kernel_trace_file("kernel-export-json.spoor");
  const json doc = json::parse(exported(path, "chrome"));
  size_t off_cpu = 0, faults = 0;
  for (const json& e : doc["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (name.starts_with("off-CPU") && e["ph"] == "B") ++off_cpu;
    if (name.find("page fault") != std::string::npos && e["ph"] == "i") ++faults;
  }
  EXPECT_EQ(off_cpu, 3u);
  EXPECT_EQ(faults, 4u);
  const std::string folded = exported(path, "folded");
  EXPECT_NE(folded.find("prog+0x3030;prog+0x2020;prog+0x1010 3"), std::string::npos)
      << "the kernel's samples, root first: " << folded;
  std::filesystem::remove(path);
}

const json* function_named(const json& functions, const std::string& name) {
  for (const json& f : functions)
    if (f["function"] == name) return &f;
  return nullptr;
}

// With and without the preload: the kernel's samples, unwound offline
// from their stack copies, put the leaf under kernel_chain_mid and main,
// which no frame-pointer walk reaches in this program.
TEST(KernelRecord, SamplesOfAProgramWithoutFramePointersUnwindToMain) {
  SKIP_WITHOUT_PERF();
  for (const std::string preload : {"", "--no-preload "}) {
    const std::string path = spoor::test::temp_path("kernel-chain.spoor");
    const Process rec = run(kSpoor + " record " + preload + "--kernel=samples,switches,faults -o " + path + " -- " +
                            SPOOR_KERNEL_CHAIN);
    ASSERT_EQ(rec.status, 0) << rec.err;
    if (rec.err.find("unavailable") != std::string::npos && rec.err.find("samples") != std::string::npos)
      GTEST_SKIP() << rec.err;
    const Process p = run(kSpoor + " report --kernel --format json --top 50 " + path);
    ASSERT_EQ(p.status, 0) << p.err;
    const json k = json::parse(p.out)["kernel"];
    const json& cpu = k["cpu"];
    ASSERT_GT(cpu["samples"].get<uint64_t>(), 20u) << preload << p.out;
    // Every sample had registers and a stack copy, but the one or two that
    // land in the exec itself (the old image gone, "no copy of the user
    // stack") or while the loader maps the libraries ("pc ... in no known
    // module") fall back to the kernel's callchain. 14 of 60 runs beside
    // another recording had one such sample, one run two.
    const uint64_t dwarf = cpu["unwound"]["dwarf"], samples = cpu["samples"];
    EXPECT_LE(samples - dwarf, 2u) << cpu["unwound"] << cpu["stops"];
    EXPECT_EQ(cpu["unwound"]["pc_only"], 0u) << cpu["stops"];
    const json* leaf = function_named(cpu["functions_by_inclusive"], "kernel_chain_leaf");
    const json* mid = function_named(cpu["functions_by_inclusive"], "kernel_chain_mid");
    const json* main = function_named(cpu["functions_by_inclusive"], "main");
    ASSERT_NE(leaf, nullptr) << preload << p.out;
    ASSERT_NE(mid, nullptr) << preload << p.out;
    ASSERT_NE(main, nullptr) << preload << p.out;
    EXPECT_GT((*leaf)["self"].get<uint64_t>() * 2, cpu["samples"].get<uint64_t>()) << "the leaf spins most";
    EXPECT_GE((*mid)["inclusive"].get<uint64_t>(), (*leaf)["self"].get<uint64_t>()) << "every leaf sample is under mid";
    EXPECT_GE((*main)["inclusive"].get<uint64_t>(), (*mid)["inclusive"].get<uint64_t>());
    EXPECT_GE(k["faults"]["minor"].get<uint64_t>(), 64u) << "the 64 fresh pages it touches";
    EXPECT_GE(k["switches"]["blocked"].get<uint64_t>(), 1u) << "its sleep";
    std::filesystem::remove(path);
  }
}

// A --no-preload recording: the children's endings and programs come from
// the kernel alone. exit_group's status where syscalls were recorded,
// "ended" where the process left none (killed); an exec is named by the
// program's file.
TEST(KernelRecord, ChildrenWithoutThePreloadEndWithTheirExitGroupStatus) {
  SKIP_WITHOUT_PERF();
  const std::string path = spoor::test::temp_path("kernel-exits.spoor");
  const Process rec = run(kSpoor + " record --no-preload --kernel=syscalls:exit_group -o " + path +
                          " -- sh -c '/bin/true; sh -c \"exit 7\"; sh -c \"kill -9 \\$\\$\"; exit 3'");
  ASSERT_EQ(rec.status, 3) << rec.err;
  if (rec.err.find("unavailable") != std::string::npos) GTEST_SKIP() << rec.err;
  const Process p = run(kSpoor + " report --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  // Each process: what its last image ran, how it ended.
  std::vector<std::pair<std::string, std::string>> ended;
  const json report = json::parse(p.out);
  for (const json& proc : report["processes"]) {
    const json& last = proc["images"].back();
    ended.emplace_back(last["exe"].get<std::string>().empty() ? last["comm"].get<std::string>() : last["exe"].get<std::string>(),
                       proc["ended"].get<std::string>());
  }
  auto count = [&](const std::string& name, const std::string& how) {
    return std::count(ended.begin(), ended.end(), std::make_pair(name, how));
  };
  EXPECT_EQ(count("/usr/bin/true", "exit 0"), 1) << "named by its file: " << p.out;
  EXPECT_EQ(count("sh", "exit 7"), 1) << p.out;
  EXPECT_EQ(count("sh", "ended"), 1) << "the killed shell: " << p.out;
  EXPECT_EQ(count("sh", "exit 3"), 1) << "the program, as the recorder reaped it: " << p.out;
  EXPECT_EQ(ended.size(), 4u) << p.out;
  std::filesystem::remove(path);
}

// The preloaded library's start talks to the recorder (socket, connect,
// sendmsg, recvmsg): calls the program never makes, left out of its
// system calls and counted apart. The program's own write stays.
TEST(KernelRecord, TheLibrarysStartIsLeftOutOfTheProgramsSystemCalls) {
  SKIP_WITHOUT_PERF();
  const std::string path = spoor::test::temp_path("kernel-shim-start.spoor");
  const Process rec = run(kSpoor + " record --kernel=syscalls:socket,connect,sendmsg,recvmsg,write -o " + path +
                          " -- sh -c 'echo written'");
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_EQ(rec.out, "written\n");
  if (rec.err.find("unavailable") != std::string::npos) GTEST_SKIP() << rec.err;
  const Process p = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(p.status, 0) << p.err;
  const json k = json::parse(p.out)["kernel"];
  std::set<std::string> names;
  for (const json& s : k["syscalls"]) names.insert(s["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"write"})) << k.dump();
  EXPECT_GE(k["preload_start_syscalls"]["count"].get<uint64_t>(), 4u) << k.dump();
  EXPECT_EQ(k["preload_start_syscalls"]["starts"].get<uint64_t>(), 1u) << k.dump();
  const Process text = run(kSpoor + " report --kernel " + path);
  EXPECT_NE(text.out.find(") Spoor's preloaded library made as it started in the program's processes and threads "
                          "(1 start)\n"),
            std::string::npos)
      << text.out;
  std::filesystem::remove(path);
}

// A stack copy of 8 bytes is too short for every caller: the report says
// how many samples stopped for it, and what would fix it.
TEST(KernelRecord, ATooShortStackCopyGetsAHint) {
  SKIP_WITHOUT_PERF();
  const std::string path = spoor::test::temp_path("kernel-short-stack.spoor");
  const Process rec = run(kSpoor + " record --no-preload --kernel=samples --kernel-stack-size 8 -o " + path + " -- " +
                          SPOOR_KERNEL_CHAIN);
  ASSERT_EQ(rec.status, 0) << rec.err;
  if (rec.err.find("samples unavailable") != std::string::npos) GTEST_SKIP() << rec.err;
  const Process j = run(kSpoor + " report --kernel --format json " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  const json cpu = json::parse(j.out)["kernel"]["cpu"];
  ASSERT_GE(cpu["samples"].get<uint64_t>(), 20u) << "~300 ms at 1 kHz";
  EXPECT_GE(cpu["stack_copy_short"].get<uint64_t>(), cpu["samples"].get<uint64_t>() / 2) << cpu["stops"];
  EXPECT_LE(cpu["largest_stack_copy"].get<uint64_t>(), 8u);
  const Process text = run(kSpoor + " report --kernel " + path);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("samples stopped because the stack copy was too short; try --kernel-stack-size 32768"),
            std::string::npos)
      << text.out;
  std::filesystem::remove(path);
}

}  // namespace
