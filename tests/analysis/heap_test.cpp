// The heap replay on a trace whose calls are known: every figure of the
// report's heap section worked out by hand in the comments.
#include <gtest/gtest.h>

#include "analysis_test_support.h"
#include "spoor/analysis/heap.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;

constexpr uint32_t kA = 1, kB = 2, kC = 3, kD = 4;  // stack IDs = sites

// live bytes after each call in the comment; the peak is 1110 at t=40.
SpoorTrace heap_trace() {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  for (uint32_t id : {kA, kB, kC, kD}) t.stack(100, 1, id, {0x401000 + id});
  t.alloc(100, 5, 0x500, 10, kD);          // 10
  t.alloc(100, 10, 0x1000, 100, kA);       // 110
  t.alloc(100, 20, 0x2000, 200, kB);       // 310
  t.free(100, 30, 0x2000);                 // 110: temporary (nothing allocated since)
  t.alloc(100, 40, 0x3000, 1000, kA);      // 1110: the peak (A 1100, D 10, B 0, C 0)
  t.free(100, 50, 0x1000);                 // 1010: A changes after the peak
  t.alloc(100, 60, 0x4000, 50, kB);        // 1060
  t.alloc(100, 65, 0x6000, 8, kC);         // 1068
  t.realloc(100, 70, 0x4000, 0x5000, 80, kC);  // 1098: frees B's 50, C gets 80
  t.free(100, 80, 0x3000);                 // 98
  t.free(100, 90, 0x9999);                 // never allocated
  t.free(100, 95, 0);                      // free(NULL)
  // Left: D 10 (0x500), C 8 (0x6000), C 80 (0x5000): leaked.
  return t;
}

const an::HeapSite& site(const an::HeapProfile& p, const Loaded& l, uint32_t id) {
  const an::StackKey key = an::stack_key(l.model.process(100)->images[0], id);
  for (const an::HeapSite& s : p.sites)
    if (s.stack == key) return s;
  ADD_FAILURE() << "no site for stack " << id;
  static an::HeapSite none;
  return none;
}

TEST(Heap, TotalsPeakTemporaryAndLeaksAreHeaptracks) {
  an::HeapAnalysis heap;
  SpoorTrace t = heap_trace();
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 1u);
  const an::HeapProfile& p = heap.profiles()[0];
  EXPECT_EQ(p.allocated_bytes, 10u + 100 + 200 + 1000 + 50 + 8 + 80);
  EXPECT_EQ(p.alloc_calls, 6u);
  EXPECT_EQ(p.free_calls, 5u);  // free(NULL) included; realloc is a call of its own
  EXPECT_EQ(p.realloc_calls, 1u);
  EXPECT_EQ(p.peak_bytes, 1110u);
  EXPECT_EQ(p.peak_ns, 40);
  EXPECT_EQ(p.temporary, 1u);
  EXPECT_EQ(p.unknown_frees, 1u);
  EXPECT_EQ(p.leaked_bytes, 98u);
  EXPECT_EQ(p.leaked_blocks, 3u);
}

TEST(Heap, SitesHaveTheirBytesCallsPeakShareAndLeaks) {
  an::HeapAnalysis heap;
  SpoorTrace t = heap_trace();
  Loaded l = load(t, {&heap});
  const an::HeapProfile& p = heap.profiles()[0];
  ASSERT_EQ(p.sites.size(), 4u);
  const an::HeapSite& a = site(p, l, kA);
  EXPECT_EQ(a.allocated_bytes, 1100u);
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.peak_bytes, 1100u) << "A freed a block after the peak: its share at the peak stays";
  EXPECT_EQ(a.leaked_bytes, 0u);
  const an::HeapSite& b = site(p, l, kB);
  EXPECT_EQ(b.allocated_bytes, 250u);
  EXPECT_EQ(b.temporary, 1u);
  EXPECT_EQ(b.peak_bytes, 0u);
  const an::HeapSite& c = site(p, l, kC);
  EXPECT_EQ(c.allocated_bytes, 88u);
  EXPECT_EQ(c.calls, 2u) << "the realloc's new block counts as an allocation of its site";
  EXPECT_EQ(c.peak_bytes, 0u);
  EXPECT_EQ(c.leaked_bytes, 88u);
  EXPECT_EQ(c.leaked_blocks, 2u);
  const an::HeapSite& d = site(p, l, kD);
  EXPECT_EQ(d.peak_bytes, 10u) << "untouched since before the peak";
  EXPECT_EQ(d.leaked_bytes, 10u);
  uint64_t at_peak = 0;
  for (const an::HeapSite& s : p.sites) at_peak += s.peak_bytes;
  EXPECT_EQ(at_peak, p.peak_bytes) << "the sites' shares add up to the peak";
}

TEST(Heap, SizeHistogramHasPowerOfTwoBuckets) {
  EXPECT_EQ(an::size_bucket(0), 0u);
  EXPECT_EQ(an::size_bucket(1), 1u);
  EXPECT_EQ(an::size_bucket(8), 4u);   // [8, 16)
  EXPECT_EQ(an::size_bucket(15), 4u);
  EXPECT_EQ(an::size_bucket(16), 5u);
  an::HeapAnalysis heap;
  SpoorTrace t = heap_trace();
  Loaded l = load(t, {&heap});
  const auto& h = heap.profiles()[0].size_histogram;
  EXPECT_EQ(h[an::size_bucket(8)], 2u);     // 8, 10
  EXPECT_EQ(h[an::size_bucket(100)], 2u);   // 100, 80: [64, 128)
  EXPECT_EQ(h[an::size_bucket(200)], 1u);
  EXPECT_EQ(h[an::size_bucket(50)], 1u);
  EXPECT_EQ(h[an::size_bucket(1000)], 1u);
  uint64_t total = 0;
  for (uint64_t n : h) total += n;
  EXPECT_EQ(total, 7u);
}

// pid 100 runs /bin/prog, which holds 64 + 16 bytes when it execs
// /bin/next; next allocates at the same address and frees it. Pid 200 is
// a process of its own.
SpoorTrace exec_trace() {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.exec_block(100, 1, "next", {"next", "--go"});
  t.process(200, 100, "child", {"child"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.alloc(100, 10, 0x1000, 64, 1);
  t.alloc(100, 11, 0x2000, 16, 2);
  t.process_start(100, 20, 1, 1, "/bin/next");
  t.alloc(100, 30, 0x1000, 32, 1);  // the same address in the new image
  t.free(100, 40, 0x1000);
  t.free(100, 41, 0x2000);          // prog's block: gone with prog's heap
  t.alloc(100, 42, 0x3000, 5, 1);   // next's leak
  t.alloc(200, 15, 0x1000, 7, 1);
  return t;
}

TEST(Heap, AnExecEndsTheImagesHeapItsLiveBlocksAreReleasedNotLeaked) {
  SpoorTrace t = exec_trace();
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 3u) << "one profile per image";
  const an::HeapProfile& prog = heap.profiles()[0];
  const an::HeapProfile& next = heap.profiles()[2];  // after pid 200's first heap call (t=15)
  ASSERT_EQ(l.model.processes[prog.process].pid, 100u);
  ASSERT_EQ(l.model.processes[next.process].pid, 100u);
  EXPECT_EQ(l.model.images[prog.image].exe, "/bin/prog");
  EXPECT_EQ(l.model.images[next.image].exe, "/bin/next");
  EXPECT_EQ(l.model.images[prog.image].command_line, (std::vector<std::string>{"prog"}))
      << "each image keeps its own PROCESS block's command line";

  EXPECT_TRUE(prog.ended_by_exec);
  EXPECT_EQ(prog.leaked_bytes, 0u) << "live at the exec is not a leak";
  EXPECT_EQ(prog.leaked_blocks, 0u);
  EXPECT_EQ(prog.released_by_exec_bytes, 80u);
  EXPECT_EQ(prog.released_by_exec_blocks, 2u);
  EXPECT_EQ(prog.peak_bytes, 80u);
  EXPECT_EQ(prog.allocated_bytes, 80u);
  EXPECT_EQ(prog.sites.size(), 2u);
  for (const an::HeapSite& s : prog.sites) EXPECT_EQ(s.leaked_blocks, 0u);

  EXPECT_FALSE(next.ended_by_exec);
  EXPECT_EQ(next.allocated_bytes, 37u) << "nothing of prog's in next's figures";
  EXPECT_EQ(next.peak_bytes, 32u);
  EXPECT_EQ(next.alloc_calls, 2u);
  EXPECT_EQ(next.free_calls, 2u);
  EXPECT_EQ(next.unknown_frees, 1u) << "prog's block, freed in next: next never allocated it";
  EXPECT_EQ(next.leaked_bytes, 5u);
  EXPECT_EQ(next.leaked_blocks, 1u);
  EXPECT_EQ(next.released_by_exec_blocks, 0u);
  ASSERT_EQ(next.sites.size(), 1u) << "stack 1 of each image is a site of its own";
  EXPECT_NE(next.sites[0].stack, prog.sites[0].stack);

  const an::HeapProfile& other = heap.profiles()[1];
  EXPECT_EQ(l.model.processes[other.process].pid, 200u);
  EXPECT_EQ(other.leaked_bytes, 7u);
}

TEST(Heap, AnExecIntoAnUntracedImageReleasesTheHeapToo) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.alloc(100, 10, 0x1000, 64, 1);
  t.exec(100, 20, "/bin/static", "a static binary ignores LD_PRELOAD");
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 1u);
  EXPECT_TRUE(heap.profiles()[0].ended_by_exec);
  EXPECT_EQ(heap.profiles()[0].released_by_exec_blocks, 1u);
  EXPECT_EQ(heap.profiles()[0].leaked_blocks, 0u);
}

TEST(Heap, AFailedExecLeavesTheHeapAsItWas) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.alloc(100, 10, 0x1000, 64, 1);
  t.exec(100, 20, "/nonexistent", "");
  t.exec_failed(100, 21, 2);
  t.free(100, 30, 0x1000);
  t.alloc(100, 40, 0x2000, 8, 1);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 1u);
  const an::HeapProfile& p = heap.profiles()[0];
  EXPECT_FALSE(p.ended_by_exec);
  EXPECT_EQ(p.unknown_frees, 0u);
  EXPECT_EQ(p.leaked_bytes, 8u);
}

// pid 100 holds A (100 bytes) and B (200) when it forks pid 200 at t=50,
// then frees A itself. The child frees A and B (its copies), allocates
// C (30) and D (40), frees C and keeps D; E (300), live in the parent at
// the fork, it never frees.
SpoorTrace fork_trace(bool child_first) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process(200, 100, "prog", {"prog"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.alloc(100, 10, 0xa000, 100, 1);
  t.alloc(100, 11, 0xb000, 200, 1);
  t.alloc(100, 12, 0xe000, 300, 2);
  t.alloc(100, 13, 0xf000, 1, 2);
  t.free(100, 14, 0xf000);  // gone before the fork: not inherited
  // The child's events may come before the parent's Fork event.
  const uint64_t fork_at = child_first ? 80 : 50;
  t.fork(100, fork_at, 200);
  t.free(100, 60, 0xa000);
  t.alloc(100, 61, 0x9000, 9, 1);  // after the fork: not the child's
  t.process_start(200, 55, 100, 0, "/bin/prog");
  t.free(200, 70, 0xa000);
  t.free(200, 71, 0xb000);
  t.alloc(200, 72, 0xc000, 30, 1);
  t.alloc(200, 73, 0xd000, 40, 1);
  t.free(200, 74, 0xc000);
  t.free(200, 75, 0x9000);  // the parent's block after the fork: never the child's
  t.process_exit(100, 90, 200, 0, 0);
  return t;
}

void expect_fork_child_figures(const an::HeapAnalysis& heap, const Loaded& l) {
  ASSERT_EQ(heap.profiles().size(), 2u);
  const an::HeapProfile& child = heap.profiles()[1];
  ASSERT_EQ(l.model.processes[child.process].pid, 200u);
  EXPECT_EQ(child.inherited_blocks, 3u) << "A, B and E were live in the parent at the fork";
  EXPECT_EQ(child.inherited_bytes, 600u);
  EXPECT_EQ(child.inherited_freed_blocks, 2u);
  EXPECT_EQ(child.inherited_freed_bytes, 300u);
  EXPECT_EQ(child.inherited_kept_blocks, 1u) << "E";
  EXPECT_EQ(child.inherited_kept_bytes, 300u);
  EXPECT_EQ(child.unknown_frees, 1u) << "only the parent's post-fork block is unknown to the child";
  EXPECT_EQ(child.leaked_blocks, 1u) << "D, the child's own, is its leak; E is not";
  EXPECT_EQ(child.leaked_bytes, 40u);
  EXPECT_EQ(child.allocated_bytes, 70u) << "inherited blocks are not the child's allocations";
  EXPECT_EQ(child.peak_bytes, 70u) << "nor in its live bytes";
  EXPECT_EQ(child.free_calls, 4u);

  const an::HeapProfile& parent = heap.profiles()[0];
  EXPECT_EQ(parent.inherited_blocks, 0u);
  EXPECT_EQ(parent.unknown_frees, 0u);
  EXPECT_EQ(parent.leaked_bytes, 200u + 300 + 9) << "the child's frees are not the parent's";
}

TEST(Heap, AForkChildStartsWithItsParentsLiveBlocks) {
  SpoorTrace t = fork_trace(false);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  expect_fork_child_figures(heap, l);
}

TEST(Heap, AForkChildWhoseEventsComeBeforeTheParentsForkStillInherits) {
  SpoorTrace t = fork_trace(true);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  // The Fork event at t=80 copies the parent's live set then (B, E and
  // the post-fork block at 0x9000, A freed already): the child's early
  // frees of B and 0x9000 become known, A's stays unknown.
  ASSERT_EQ(heap.profiles().size(), 2u);
  const an::HeapProfile& child = heap.profiles()[1];
  EXPECT_EQ(child.inherited_blocks, 3u);
  EXPECT_EQ(child.inherited_freed_blocks, 2u);
  EXPECT_EQ(child.inherited_kept_blocks, 1u) << "E";
  EXPECT_EQ(child.unknown_frees, 1u);
  EXPECT_EQ(child.leaked_blocks, 1u);
  EXPECT_EQ(child.leaked_bytes, 40u);
}

TEST(Heap, SpawnedAndUnsaidChildrenInheritNothing) {
  for (int how = 0; how < 2; ++how) {
    SpoorTrace t;
    t.process(100, 1, "prog", {"prog"});
    t.process(200, 100, "tool", {"tool"});
    t.process_start(100, 1, 1, 0, "/bin/prog");
    t.alloc(100, 10, 0xa000, 100, 1);
    if (how == 0) {
      t.fork(100, 20, 200, true);  // posix_spawn
    }  // how 1: a vfork child, of which the trace has no Fork
    t.process_start(200, 30, 100, 0, "/bin/tool");
    t.alloc(200, 40, 0xa000, 10, 1);  // ASLR off: the same address, its own block
    t.free(200, 41, 0xa000);
    an::HeapAnalysis heap;
    Loaded l = load(t, {&heap});
    ASSERT_EQ(heap.profiles().size(), 2u);
    const an::HeapProfile& child = heap.profiles()[1];
    EXPECT_EQ(child.inherited_blocks, 0u) << how;
    EXPECT_EQ(child.unknown_frees, 0u) << how;
    EXPECT_EQ(child.leaked_blocks, 0u) << how;
    EXPECT_EQ(child.temporary, 1u) << how;
  }
}

TEST(Heap, AForkChildThatExecsDropsWhatItInheritedWithItsImage) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process(200, 100, "prog", {"prog"});
  t.exec_block(200, 100, "tool", {"tool"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.alloc(100, 10, 0xa000, 100, 1);
  t.alloc(100, 11, 0xb000, 200, 1);
  t.fork(100, 20, 200);
  t.process_start(200, 30, 100, 0, "/bin/prog");
  t.free(200, 31, 0xa000);
  t.alloc(200, 32, 0xc000, 8, 1);
  t.process_start(200, 40, 100, 1, "/bin/tool");
  t.alloc(200, 50, 0xd000, 16, 1);
  t.free(200, 51, 0xb000);  // the first image's: gone with it
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 3u);
  const an::HeapProfile& forked = heap.profiles()[1];
  const an::HeapProfile& tool = heap.profiles()[2];
  EXPECT_TRUE(forked.ended_by_exec);
  EXPECT_EQ(forked.inherited_freed_blocks, 1u);
  EXPECT_EQ(forked.inherited_kept_blocks, 1u);
  EXPECT_EQ(forked.released_by_exec_blocks, 1u) << "its own block at the exec";
  EXPECT_EQ(forked.leaked_blocks, 0u);
  EXPECT_EQ(tool.inherited_blocks, 0u) << "an exec'd image inherits nothing";
  EXPECT_EQ(tool.unknown_frees, 1u);
  EXPECT_EQ(tool.leaked_blocks, 1u);
}

TEST(Heap, ManyBlocksComeAndGoThroughTheAddressTable) {
  // Enough blocks to grow the table several times and to shift entries
  // back on removal; the figures show no block was lost or duplicated.
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  uint64_t ts = 1;
  for (uint64_t i = 1; i <= 5000; ++i) t.alloc(100, ts++, i * 16, i, 1);
  for (uint64_t i = 1; i <= 5000; i += 2) t.free(100, ts++, i * 16);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  const an::HeapProfile& p = heap.profiles()[0];
  EXPECT_EQ(p.peak_bytes, 5000u * 5001 / 2);
  EXPECT_EQ(p.leaked_blocks, 2500u);
  EXPECT_EQ(p.leaked_bytes, 2500u * 2501);  // 2 + 4 + ... + 5000
  EXPECT_EQ(p.unknown_frees, 0u);
}

}  // namespace

// The most bytes live in [from, to) by the definition, from the changes
// (time, bytes live after it) in time order: what was live on entering the
// span, and each change within it.
uint64_t most_live_between(const std::vector<std::pair<int64_t, uint64_t>>& changes, int64_t from, int64_t to) {
  uint64_t live = 0, most = 0;
  for (const auto& [time, after] : changes) {
    if (time >= to) break;
    if (time < from) live = after;
    else most = std::max(most, after);
  }
  return std::max(most, live);
}

// Bytes live over time from the start (0) to the exit (64 ms), in columns
// of a power of two of nanoseconds (2^20 here: 62 of them); a short spike
// shows in its own column only.
TEST(HeapTimeline, EachColumnHoldsTheMostBytesLiveAtAnyMomentInIt) {
  constexpr int64_t kMs = 1'000'000;
  const std::vector<std::pair<int64_t, uint64_t>> changes = {
      {10 * kMs + kMs / 2, 1000},  // alloc 0x1000
      {20 * kMs + kMs / 2, 3000},  // alloc 0x2000
      {30 * kMs + kMs / 2, 2000},  // free 0x1000
      {40 * kMs + kMs / 4, 2500},  // alloc 0x3000: a spike of 0.25 ms
      {40 * kMs + kMs / 2, 2000},  // free 0x3000
      {50 * kMs + kMs / 2, 0},     // free 0x2000
      {55 * kMs + kMs / 2, 300}};  // alloc 0x4000: leaked, live to the exit
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.stack(100, 0, 1, {0x401001});
  t.process_start(100, 0, 1, 0, "/bin/prog");
  t.alloc(100, changes[0].first, 0x1000, 1000, 1);
  t.alloc(100, changes[1].first, 0x2000, 2000, 1);
  t.free(100, changes[2].first, 0x1000);
  t.alloc(100, changes[3].first, 0x3000, 500, 1);
  t.free(100, changes[4].first, 0x3000);
  t.free(100, changes[5].first, 0x2000);
  t.alloc(100, changes[6].first, 0x4000, 300, 1);
  t.process_exit(100, 64 * kMs, 100, 0, 0);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 1u);
  const an::HeapTimeline& tl = heap.profiles()[0].timeline;
  EXPECT_EQ(tl.start_ns, 0);
  EXPECT_EQ(tl.column_ns, int64_t{1} << 20) << "the least power of two that fits 64 ms in 64 columns";
  ASSERT_EQ(tl.most_live_bytes.size(), 62u) << "64 ms / 2^20 ns, to the exit";
  for (size_t c = 0; c < tl.most_live_bytes.size(); ++c) {
    const int64_t from = static_cast<int64_t>(c) * tl.column_ns;
    EXPECT_EQ(tl.most_live_bytes[c], most_live_between(changes, from, from + tl.column_ns)) << "column " << c;
  }
  // Worked by hand: the spike at 40.25 ms is in column 38 (39.85-40.89 ms).
  EXPECT_EQ(tl.most_live_bytes[38], 2500u);
  EXPECT_EQ(tl.most_live_bytes[37], 2000u);
  EXPECT_EQ(tl.most_live_bytes[39], 2000u);
  EXPECT_EQ(tl.most_live_bytes[9], 0u);
  EXPECT_EQ(tl.most_live_bytes.back(), 300u);
  EXPECT_EQ(*std::max_element(tl.most_live_bytes.begin(), tl.most_live_bytes.end()), heap.profiles()[0].peak_bytes);
}

// A long image (100 s) whose changes all come in its first nanoseconds and
// its last second: the columns widen by merging, and the spike at the
// start is kept in the first column however wide it grew.
TEST(HeapTimeline, ALongImageKeepsAnEarlySpikeAndItsEnd) {
  constexpr int64_t kS = 1'000'000'000;
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.stack(100, 0, 1, {0x401001});
  t.process_start(100, 0, 1, 0, "/bin/prog");
  t.alloc(100, 100, 0x1000, 1 << 20, 1);  // 1 MiB for 100 ns
  t.free(100, 200, 0x1000);
  t.alloc(100, 300, 0x2000, 64, 1);       // 64 bytes from then on
  t.alloc(100, 99 * kS + kS / 2, 0x3000, 4096, 1);  // in the last column
  t.process_exit(100, 100 * kS, 100, 0, 0);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 1u);
  const an::HeapTimeline& tl = heap.profiles()[0].timeline;
  EXPECT_EQ(tl.column_ns, int64_t{1} << 31);
  ASSERT_EQ(tl.most_live_bytes.size(), 47u) << "100 s / 2^31 ns";
  EXPECT_EQ(tl.most_live_bytes.front(), uint64_t{1} << 20);
  for (size_t c = 1; c + 1 < tl.most_live_bytes.size(); ++c) EXPECT_EQ(tl.most_live_bytes[c], 64u) << "column " << c;
  EXPECT_EQ(tl.most_live_bytes.back(), 64u + 4096);
}

// Times far apart (19.5 hours here) stretch the columns, never past 64.
TEST(HeapTimeline, TimesFarApartStretchTheColumnsWithinTheirNumber) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.stack(100, 0, 1, {0x401001});
  t.process_start(100, 0, 1, 0, "/bin/prog");
  t.alloc(100, 1, 0x1000, 100, 1);
  t.free(100, uint64_t{1} << 46, 0x1000);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 1u);
  const an::HeapTimeline& tl = heap.profiles()[0].timeline;
  EXPECT_EQ(tl.column_ns, int64_t{1} << 41) << "2^46 ns in at most 64 columns";
  ASSERT_EQ(tl.most_live_bytes.size(), 33u);
  EXPECT_EQ(tl.most_live_bytes.front(), 100u);
  EXPECT_EQ(tl.most_live_bytes[1], 100u);
  EXPECT_EQ(tl.most_live_bytes.back(), 100u) << "the free is in the last column: live on entering it";
}

// An exec ends the image's timeline at the exec; the next image's starts there.
TEST(HeapTimeline, AnExecEndsOneImagesTimelineAndStartsTheNext) {
  SpoorTrace t = exec_trace();
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 3u);
  const an::HeapProfile& prog = heap.profiles()[0];
  const an::HeapProfile& next = heap.profiles()[2];
  EXPECT_EQ(prog.timeline.start_ns, 1);
  EXPECT_EQ(prog.timeline.column_ns, 1) << "from 1 to the exec at 20: 19 ns";
  ASSERT_EQ(prog.timeline.most_live_bytes.size(), 20u);
  EXPECT_EQ(prog.timeline.most_live_bytes[8], 0u) << "at 9";
  EXPECT_EQ(prog.timeline.most_live_bytes[9], 64u) << "at 10";
  EXPECT_EQ(prog.timeline.most_live_bytes[10], 80u) << "at 11";
  EXPECT_EQ(prog.timeline.most_live_bytes.back(), 80u) << "to the exec";
  EXPECT_EQ(next.timeline.start_ns, 20);
  EXPECT_EQ(*std::max_element(next.timeline.most_live_bytes.begin(), next.timeline.most_live_bytes.end()), 32u)
      << "nothing of prog's";
}
