// spoor record end to end: a program that runs within a small stack limit
// (ulimit -s) runs within it traced too. The shim's start keeps its path
// and directory buffers off the program's stack, and the shim is bound as
// it loads: glibc's lazy resolver saves the CPU's whole extended state on
// the calling thread's stack (11 KiB where the CPU has AMX), and a shim
// bound lazily needed 28-32 KiB where `true` runs in 16.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "record_test_support.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;

using spoor::test::Process;
using spoor::test::run;
using namespace spoor::test::record;  // trace_path, kSpoor

constexpr int kRuns = 5;

std::string with_stack_limit(int kib, const std::string& command) {
  return "prlimit --stack=" + std::to_string(kib * 1024) + " " + command;
}

// The smallest limit, in steps of 4 KiB, under which `command` exits 0 in
// every one of kRuns runs (the stack's top moves a little from run to run);
// 0 if none up to 128 KiB does.
int smallest_stack_kib(const std::string& command) {
  for (int kib = 8; kib <= 128; kib += 4) {
    bool every_run = true;
    for (int i = 0; i < kRuns && every_run; ++i) every_run = run(with_stack_limit(kib, command)).status == 0;
    if (every_run) return kib;
  }
  return 0;
}

TEST(Record, AProgramRunsTracedWithinASmallStackLimitItRunsWithinUntraced) {
  if (run("prlimit --version").status != 0) GTEST_SKIP() << "no prlimit (util-linux)";
  const int untraced_kib = smallest_stack_kib("true");
  ASSERT_NE(untraced_kib, 0) << "true does not run under any stack limit up to 128 KiB";
  // The hooks take 1-2 KiB of a thread's stack beyond the call's own
  // (preload/README.md); 8 KiB leaves that and the top's movement.
  const int traced_kib = untraced_kib + 8;
  const std::string path = trace_path("stack-limit");
  for (int i = 0; i < kRuns; ++i) {
    const Process r = run(kSpoor + " record -o " + path + " -- " + with_stack_limit(traced_kib, "true"));
    ASSERT_EQ(r.status, 0) << "untraced, true runs under " << untraced_kib << " KiB; traced, run " << i
                           << " under " << traced_kib << " KiB failed: " << r.err;
    EXPECT_NE(r.err.find(", 0 lost, "), std::string::npos) << r.err;
    // prlimit, then true in its place: the shim started in both images.
    auto trace = reader::Trace::open(path);
    ASSERT_TRUE(trace);
    std::vector<uint64_t> exec_counts;
    reader::EventReader events(trace.value());
    reader::Event e;
    while (events.next(e))
      if (e.descriptor->name == "ProcessStart") exec_counts.push_back(std::get<uint64_t>(*e.field("exec_count")));
    EXPECT_EQ(exec_counts, (std::vector<uint64_t>{0, 1})) << r.err;
  }
  std::filesystem::remove(path);
}

}  // namespace
