// Spoor next to heaptrack on a program whose allocator calls are known in
// advance (programs/heap_known.h): the allocation calls and bytes Spoor
// records equal what the program did, and equal heaptrack's report of the
// same program for the functions heaptrack interposes.
//
// heaptrack_print 1.4 prints the call count ("calls to allocation
// functions: N") but no byte total; its size histogram (-H FILE: one "size
// count" line per size, every allocation call of the run) gives the bytes
// and lets both reports be restricted to the program's size band.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "heap_known.h"
#include "heap_tally.h"
#include "peer_process.h"

namespace {

using namespace spoor::test;

// The allocation calls heap_known.cpp makes, by the size a heap profiler
// records: pvalloc's block is whole pages.
SizeCounts known_allocations(bool only_what_heaptrack_sees) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  SizeCounts c;
  for (const heap_known::Batch& b : heap_known::kBatches) {
    if (only_what_heaptrack_sees && !b.heaptrack_sees) continue;
    for (int i = 0; i < b.count; ++i) {
      uint64_t size = heap_known::size_of(b, i);
      if (b.function == heap_known::Function::pvalloc) size = (size + page - 1) / page * page;
      c[size]++;
    }
  }
  return c;
}

SizeCounts known_band(const SizeCounts& c) { return in_band(c, heap_known::kBandLow, heap_known::kBandHigh); }

struct HeaptrackReport {
  std::string error;  // what went wrong running or reading heaptrack, or ""
  uint64_t calls = 0;         // "calls to allocation functions: N"
  SizeCounts histogram;       // -H: size -> calls
};

// Runs `program` under heaptrack and reads its report with heaptrack_print.
HeaptrackReport heaptrack(const std::string& program) {
  HeaptrackReport h;
  const std::string base = scratch_path("heaptrack");
  const ShellRun rec = run_shell("heaptrack -o " + base + " " + program);
  if (rec.status != 0) {
    h.error = "heaptrack exited with " + std::to_string(rec.status) + ": " + rec.err + rec.out;
    return h;
  }
  // heaptrack appends the compression's extension (.zst, or .gz).
  std::string data;
  for (const char* ext : {".zst", ".gz", ""})
    if (std::filesystem::exists(base + ext)) {
      data = base + ext;
      break;
    }
  if (data.empty()) {
    h.error = "heaptrack wrote no " + base + ".zst: " + rec.out;
    return h;
  }
  const std::string hist = base + ".hist";
  const ShellRun print = run_shell("heaptrack_print -f " + data + " -H " + hist);
  std::filesystem::remove(data);
  if (print.status != 0) {
    h.error = "heaptrack_print exited with " + std::to_string(print.status) + ": " + print.err;
    return h;
  }
  const size_t at = print.out.find("calls to allocation functions: ");
  if (at == std::string::npos ||
      std::sscanf(print.out.c_str() + at, "calls to allocation functions: %" SCNu64, &h.calls) != 1) {
    h.error = "no 'calls to allocation functions:' line in heaptrack_print's output:\n" + print.out;
    return h;
  }
  std::istringstream lines(file_content(hist));
  std::filesystem::remove(hist);
  uint64_t size, count;
  while (lines >> size >> count) h.histogram[size] += count;
  return h;
}

TEST(HeaptrackCompare, SpoorRecordsTheKnownProgramsAllocationCallsAndBytes) {
  const std::string path = scratch_path("known.spoor");
  const ShellRun r = run_shell(std::string(SPOOR_TOOL) + " record -o " + path + " -- " + SPOOR_HEAP_KNOWN);
  ASSERT_EQ(r.status, 0) << r.err;
  const HeapTally t = tally_heap(path);
  std::filesystem::remove(path);
  ASSERT_EQ(t.error, "");
  EXPECT_FALSE(t.damaged);
  const SizeCounts spoor = known_band(t.allocations);
  const SizeCounts known = known_allocations(false);
  EXPECT_EQ(total_blocks(spoor), total_blocks(known));
  EXPECT_EQ(total_bytes(spoor), total_bytes(known));
  EXPECT_EQ(spoor, known) << "size by size: a miscounted function shows as its sizes (programs/heap_known.h)";
  EXPECT_TRUE(known_band(sizes_of(t.live)).empty()) << "every block the program allocated was freed";
}

TEST(HeaptrackCompare, SpoorAndHeaptrackReportTheSameCallsAndBytes) {
  if (!tool_installed("heaptrack") || !tool_installed("heaptrack_print"))
    GTEST_SKIP() << "heaptrack is not installed (scripts/install-test-deps.sh installs it)";
  const HeaptrackReport h = heaptrack(SPOOR_HEAP_KNOWN);
  ASSERT_EQ(h.error, "");
  EXPECT_EQ(h.calls, total_blocks(h.histogram)) << "the histogram holds every call heaptrack counted";
  const SizeCounts peer = known_band(h.histogram);
  EXPECT_EQ(peer, known_allocations(true)) << "heaptrack sees the program's calls (but memalign, pvalloc)";

  const std::string path = scratch_path("known-vs-heaptrack.spoor");
  const ShellRun r = run_shell(std::string(SPOOR_TOOL) + " record -o " + path + " -- " + SPOOR_HEAP_KNOWN);
  ASSERT_EQ(r.status, 0) << r.err;
  const HeapTally t = tally_heap(path);
  std::filesystem::remove(path);
  ASSERT_EQ(t.error, "");
  // Spoor's calls to the functions heaptrack interposes.
  SizeCounts spoor;
  for (const auto& [size, count] : known_band(t.allocations))
    if (known_allocations(true).count(size)) spoor[size] = count;
  EXPECT_EQ(total_blocks(spoor), total_blocks(peer)) << "allocation calls";
  EXPECT_EQ(total_bytes(spoor), total_bytes(peer)) << "bytes allocated";
  EXPECT_EQ(spoor, peer);
}

}  // namespace
