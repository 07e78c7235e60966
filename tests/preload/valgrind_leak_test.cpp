// Spoor next to valgrind's leak check on a program whose leaks are known in
// advance (programs/heap_leaks.h), every one definitely lost: the blocks
// Spoor's trace leaves unfreed in the program's size band are exactly
// those, and their bytes are what valgrind --leak-check=full reports as
// "definitely lost".
//
// Why a band: blocks the C and C++ runtimes keep until exit are still
// reachable for valgrind (not lost), but unfreed in any trace; the
// program's leaks are sized where the runtimes never allocate.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "heap_leaks.h"
#include "heap_tally.h"
#include "peer_process.h"

namespace {

using namespace spoor::test;

SizeCounts known_leaks() {
  SizeCounts c;
  for (const heap_leaks::Batch& b : heap_leaks::kLeaks)
    for (int i = 0; i < b.count; ++i) c[heap_leaks::size_of(b, i)]++;
  return c;
}

struct ValgrindLeaks {
  std::string error;
  uint64_t definitely_lost_bytes = 0;
  uint64_t definitely_lost_blocks = 0;
  uint64_t possibly_lost_blocks = 0;
};

uint64_t without_commas(std::string digits) {
  std::erase(digits, ',');
  return std::stoull(digits);
}

ValgrindLeaks valgrind(const std::string& program) {
  ValgrindLeaks v;
  const std::string log = scratch_path("valgrind.log");
  const ShellRun r = run_shell("valgrind --leak-check=full --log-file=" + log + " " + program);
  const std::string report = file_content(log);
  std::filesystem::remove(log);
  if (r.status != 0) {
    v.error = "valgrind exited with " + std::to_string(r.status) + ": " + r.err + report;
    return v;
  }
  // "==123==    definitely lost: 1,300,125 bytes in 30 blocks"
  std::smatch m;
  if (!std::regex_search(report, m, std::regex(R"(definitely lost: ([0-9,]+) bytes in ([0-9,]+) blocks)"))) {
    v.error = "no 'definitely lost:' line in valgrind's report:\n" + report;
    return v;
  }
  v.definitely_lost_bytes = without_commas(m[1]);
  v.definitely_lost_blocks = without_commas(m[2]);
  if (std::regex_search(report, m, std::regex(R"(possibly lost: [0-9,]+ bytes in ([0-9,]+) blocks)")))
    v.possibly_lost_blocks = without_commas(m[1]);
  return v;
}

// valgrind's leak check is conservative: a stale word that happens to point
// inside a leaked block (about one run in six here, with address-space
// randomization) turns that block into "possibly lost". Such a run says
// nothing about definitely lost bytes, so it is run again, a few times at
// most.
ValgrindLeaks valgrind_without_stray_pointers(const std::string& program) {
  ValgrindLeaks v;
  for (int attempt = 0; attempt < 5; ++attempt) {
    v = valgrind(program);
    if (!v.error.empty() || v.possibly_lost_blocks == 0) break;
  }
  return v;
}

TEST(ValgrindLeaks, SpoorFindsExactlyTheBlocksTheProgramLeaked) {
  const std::string path = scratch_path("leaks.spoor");
  const ShellRun r = run_shell(std::string(SPOOR_TOOL) + " record -o " + path + " -- " + SPOOR_HEAP_LEAKS);
  ASSERT_EQ(r.status, 0) << r.err;
  const HeapTally t = tally_heap(path);
  std::filesystem::remove(path);
  ASSERT_EQ(t.error, "");
  EXPECT_FALSE(t.damaged);
  const SizeCounts leaks = in_band(sizes_of(t.live), heap_leaks::kBandLow, heap_leaks::kBandHigh);
  EXPECT_EQ(total_blocks(leaks), heap_leaks::leaked_blocks());
  EXPECT_EQ(total_bytes(leaks), heap_leaks::leaked_bytes());
  EXPECT_EQ(leaks, known_leaks()) << "size by size (programs/heap_leaks.h)";
}

TEST(ValgrindLeaks, SpoorsLeakedBytesAreValgrindsDefinitelyLost) {
  if (!tool_installed("valgrind")) GTEST_SKIP() << "valgrind is not installed (scripts/install-test-deps.sh installs it)";
  const ValgrindLeaks v = valgrind_without_stray_pointers(SPOOR_HEAP_LEAKS);
  ASSERT_EQ(v.error, "");
  ASSERT_EQ(v.possibly_lost_blocks, 0u) << "valgrind found a stray pointer into a leaked block in every run";
  EXPECT_EQ(v.definitely_lost_bytes, heap_leaks::leaked_bytes()) << "valgrind agrees with the program";
  EXPECT_EQ(v.definitely_lost_blocks, heap_leaks::leaked_blocks());

  const std::string path = scratch_path("leaks-vs-valgrind.spoor");
  const ShellRun r = run_shell(std::string(SPOOR_TOOL) + " record -o " + path + " -- " + SPOOR_HEAP_LEAKS);
  ASSERT_EQ(r.status, 0) << r.err;
  const HeapTally t = tally_heap(path);
  std::filesystem::remove(path);
  ASSERT_EQ(t.error, "");
  const SizeCounts leaks = in_band(sizes_of(t.live), heap_leaks::kBandLow, heap_leaks::kBandHigh);
  EXPECT_EQ(total_bytes(leaks), v.definitely_lost_bytes);
  EXPECT_EQ(total_blocks(leaks), v.definitely_lost_blocks);
}

// spoor record of valgrind: the program valgrind runs gets the shim through
// LD_PRELOAD too, inside valgrind's tool, which checks every load the shim
// makes. The shim stays out of its way there (attach.cpp), so valgrind
// prints and exits as it does alone: no error of the shim's counted as the
// program's (libunwind's walk once made valgrind report "uninitialised
// byte(s)" and fail --error-exitcode runs).
TEST(ValgrindLeaks, ValgrindUnderSpoorReportsWhatItDoesAlone) {
  if (!tool_installed("valgrind")) GTEST_SKIP() << "valgrind is not installed (scripts/install-test-deps.sh installs it)";
  const std::string valgrind = "valgrind -q --error-exitcode=3 --leak-check=no " + std::string(SPOOR_HEAP_LEAKS);
  const ShellRun alone = run_shell(valgrind);
  ASSERT_EQ(alone.status, 0) << alone.err;
  const std::string path = scratch_path("under-valgrind.spoor");
  const ShellRun traced = run_shell(std::string(SPOOR_TOOL) + " record -o " + path + " -- " + valgrind);
  std::filesystem::remove(path);
  EXPECT_EQ(traced.status, alone.status) << traced.err;
  EXPECT_EQ(traced.out, alone.out);
  // valgrind's own lines start with ==PID==; spoor record's with its name.
  EXPECT_EQ(traced.err.find("=="), std::string::npos) << traced.err;
  EXPECT_NE(traced.err.find("memcheck"), std::string::npos) << "named as not traced: " << traced.err;
}

}  // namespace
