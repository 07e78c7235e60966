// spoor record end to end: the descriptors and namespaces of the traced
// program are its own (the shim's connection, libunwind's pipe and the
// recorder's view of its pids stay out of its way).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "record_test_support.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;

using spoor::test::Process;
using spoor::test::run;
using namespace spoor::test::record;  // trace_path, stack_frames, count_heap, kSpoor, traced_processes

// A program started in another network namespace (unshare -n, ip netns
// exec, a sandbox without network) does not see the recorder's abstract
// socket address: the shim then connects to the same socket as a file.
// Needs the right to make a network namespace (root, here).
TEST(Record, AProgramInAnotherNetworkNamespaceIsTraced) {
  if (run("unshare -n true").status != 0) GTEST_SKIP() << "cannot make a network namespace here";
  const Process r = run(kSpoor + " record -o " + trace_path("netns") + " -- unshare -n sh -c '" +
                        SPOOR_HEAP_COUNTS + " 10 inside; echo $?'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "inside\n7\n");
  // unshare, which becomes sh, and the program it starts.
  EXPECT_NE(r.err.find("2 processes,"), std::string::npos) << r.err;
  const Process report = run(kSpoor + " report " + trace_path("netns"));
  EXPECT_EQ(report.err.find("never reached the recorder"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("never reached the recorder"), std::string::npos) << report.out;
  std::filesystem::remove(trace_path("netns"));
}

// A program that puts a socket of its own on every descriptor, the number
// of the shim's connection to spoor record among them: the shim must not
// send its note about an untraceable program into the program's socket,
// nor close the program's descriptor in a fork child (where it drops the
// parent's connection). The program counts the bytes its socket got.
TEST(Record, AProgramThatReusesTheConnectionsNumberKeepsItsDescriptor) {
  const std::string program = std::string(SPOOR_FD_REUSE) + " " + SPOOR_HEAP_COUNTS_STATIC;
  const Process alone = run(program);
  ASSERT_EQ(alone.status, 0) << alone.err;
  ASSERT_EQ(alone.out, "spawned\n61 bytes\n");
  const Process traced = run(kSpoor + " record -o " + trace_path("fd-reuse") + " -- " + program);
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, alone.out) << traced.err;
  EXPECT_NE(traced.err.find("2 processes,"), std::string::npos) << "the fork child is traced: " << traced.err;
  std::filesystem::remove(trace_path("fd-reuse"));
}

// The shim's own descriptors (its connection to spoor record, libunwind's
// pipe) sit at the top of the program's range: the program's first open()
// and pipe() get the numbers they get alone (they got 6, 7 and 8).
TEST(Record, TheProgramsFirstDescriptorsAreTheOnesItGetsAlone) {
  const Process alone = run(std::string(SPOOR_FIRST_DESCRIPTORS) + " 3>&- 4>&- 5>&-");
  ASSERT_EQ(alone.status, 0) << alone.err;
  ASSERT_EQ(alone.out, "open 3, pipe 4 5\n");
  const Process traced = run(kSpoor + " record -o " + trace_path("first-fds") + " -- " + SPOOR_FIRST_DESCRIPTORS +
                             " 3>&- 4>&- 5>&-");
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, alone.out) << traced.err;
  std::filesystem::remove(trace_path("first-fds"));
  // Under a low limit too (ulimit -n 64: a sandbox, a test of running out).
  const Process low = run("sh -c 'ulimit -n 64 && exec " + kSpoor + " record -o " + trace_path("first-fds") +
                          " -- " + SPOOR_FIRST_DESCRIPTORS + " 3>&- 4>&- 5>&-'");
  EXPECT_EQ(low.status, 0) << low.err;
  EXPECT_EQ(low.out, alone.out) << low.err;
  std::filesystem::remove(trace_path("first-fds"));
}

// Listed, the program's descriptor table reads as it does untraced: the
// shim's connection is left out of the entries of /proc/self/fd and its
// other names (ls through opendir, find through fdopendir, Python's
// os.listdir, a shell's glob; and a program listing it by a relative
// name, with readdir_r, scandir, scandirat, and getdents64 through its
// wrapper and syscall(), 64 bytes a read), as it is out of the program's
// first numbers above. It and libunwind's pipe (which the shim no longer
// keeps open) listed as 960-962 before.
TEST(Record, TheProgramsListingOfItsDescriptorsLeavesTheShimsOut) {
  const std::vector<std::string> listings = {
      "ls /proc/self/fd /dev/fd/ /proc/self/fdinfo",
      "find /proc/self/fd",
      "python3 -c 'import os; print(sorted(os.listdir(\"/proc/self/fd\")), sorted(os.listdir(\"/proc/%d/fd\" % os.getpid())))'",
      "bash -c 'echo /proc/self/fd/*'",
      SPOOR_FD_LISTINGS,
  };
  for (const std::string& listing : listings) {
    const Process alone = run(listing);
    ASSERT_EQ(alone.status, 0) << listing << ": " << alone.err;
    const Process traced = run(kSpoor + " record -o " + trace_path("fd-listing") + " -- " + listing);
    EXPECT_EQ(traced.status, 0) << listing << ": " << traced.err;
    EXPECT_EQ(traced.out, alone.out) << listing << ": " << traced.err;
  }
  std::filesystem::remove(trace_path("fd-listing"));
}

// libunwind keeps the numbers of the pipe it checks addresses with. A
// program that closed every descriptor and then put files of its own on
// those numbers (dup2) had bytes of them read by libunwind's next walk, a
// byte of memory written into them, or the file closed under it. The shim
// now closes that pipe at once and answers libunwind's calls on its
// numbers itself (unwind_pipe.h). Without the rule cache the first walks
// of each call site are libunwind's.
TEST(Record, LibunwindNeverTouchesTheProgramsFilesOnTheShimsFormerNumbers) {
  const std::string files = spoor::test::temp_path("shim-numbers");
  const std::string program = std::string(SPOOR_SHIM_NUMBERS_REUSED) + " " + files;
  const Process alone = run(program);
  ASSERT_EQ(alone.status, 0) << alone.err;
  EXPECT_EQ(alone.out, "files in place\nunchanged\n");
  for (int i = 0; i < 3; ++i) {
    const Process traced =
        run("SPOOR_RULE_CACHE=off " + kSpoor + " record -o " + trace_path("shim-numbers") + " -- " + program);
    EXPECT_EQ(traced.status, 0) << traced.err;
    EXPECT_EQ(traced.out, alone.out) << traced.err;
  }
  std::filesystem::remove(trace_path("shim-numbers"));
}

// A process in a pid namespace of its own sees other pids than the
// recorder (getpid() is 1 for the first). Its PROCESS and metadata blocks
// named that pid while the recorder put its streams under the real one:
// every event of it was unreadable ("event key 10 has no EVENT block for
// pid ..."). The shim now writes the pid and parent the recorder sees.
// Needs the right to make a pid namespace (root, here).
TEST(Record, AProcessInAnotherPidNamespaceIsNamedAsTheRecorderSeesIt) {
  if (run("unshare --pid --fork true").status != 0) GTEST_SKIP() << "cannot make a pid namespace here";
  const std::string path = trace_path("pidns");
  const Process r = run(kSpoor + " record -o " + path + " -- unshare --pid --fork sh -c '" + SPOOR_HEAP_COUNTS +
                        " 10 inside; echo $?'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "inside\n7\n");
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage()) << trace->damage()->message;
  const std::vector<const reader::Process*> processes = traced_processes(*trace);
  ASSERT_EQ(processes.size(), 3u) << "unshare, its child (which becomes sh), and the program";
  std::set<uint32_t> pids;
  for (const reader::Process* p : processes) pids.insert(p->pid);
  size_t parents_in_tree = 0;
  for (const reader::Process* p : processes) {
    EXPECT_GT(p->pid, 2u) << "the recorder's number, not the namespace's";
    parents_in_tree += pids.count(p->ppid);
  }
  EXPECT_EQ(parents_in_tree, 2u) << "unshare's child and the program have their parents' real pids";
  reader::EventReader events(trace.value());
  reader::Event e;
  uint64_t allocs = 0;
  while (events.next(e)) {
    allocs += e.descriptor->name == "Alloc";
    // A child named by its number inside the namespace would be a process
    // the trace does not have ("2", exit 0).
    const char* named = e.descriptor->name == "ProcessExit" ? "pid" : e.descriptor->name == "Fork" ? "child_pid" : nullptr;
    if (named != nullptr && e.pid != processes.front()->ppid) {
      EXPECT_TRUE(pids.count(static_cast<uint32_t>(std::get<uint64_t>(*e.field(named)))))
          << e.descriptor->name << " by pid " << e.pid << " names a process not in the trace";
    }
  }
  EXPECT_TRUE(events.damages().empty()) << events.damages().front().message;
  EXPECT_GE(allocs, 10u) << "the program's allocations are readable";
  std::filesystem::remove(path);
}

}  // namespace
