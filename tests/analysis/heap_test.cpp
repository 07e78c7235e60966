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

TEST(Heap, AnExecLeaksTheOldImagesBlocksAndEachProcessHasItsOwnProfile) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process(200, 100, "child", {"child"});
  t.process_start(100, 1, 1, 0, "/bin/prog");
  t.alloc(100, 10, 0x1000, 64, 1);
  t.process_start(100, 20, 1, 1, "/bin/next");
  t.alloc(100, 30, 0x1000, 32, 1);  // the same address in the new image
  t.free(100, 40, 0x1000);
  t.alloc(200, 15, 0x1000, 7, 1);
  an::HeapAnalysis heap;
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 2u);
  const an::HeapProfile& p = heap.profiles()[0];
  EXPECT_EQ(l.model.processes[p.process].pid, 100u);
  EXPECT_EQ(p.leaked_bytes, 64u);
  EXPECT_EQ(p.leaked_blocks, 1u);
  EXPECT_EQ(p.peak_bytes, 64u);
  EXPECT_EQ(p.sites.size(), 2u) << "stack 1 of each image is a site of its own";
  EXPECT_EQ(heap.profiles()[1].leaked_bytes, 7u);
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
