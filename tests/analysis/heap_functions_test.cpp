// Heap sites merged by their first frame, on a trace whose module has no
// symbols: rows by module+offset (by the raw address outside every
// module), one row for stack 0 and one for stacks the trace never
// described, the stack that allocated most under each.
#include <gtest/gtest.h>

#include "analysis_test_support.h"
#include "spoor/analysis/heap.h"
#include "spoor/analysis/heap_functions.h"
#include "spoor/analysis/symbolized_stacks.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;

// Stacks 1 and 2 share their first address (two callers of one
// allocating call); stack 3 allocates elsewhere in the module; stack 4
// outside every module; stack 9 is never described.
SpoorTrace merged_trace() {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  t.stack(100, 1, 1, {0x401005, 0x402000});
  t.stack(100, 1, 2, {0x401005, 0x403000});
  t.stack(100, 1, 3, {0x401100, 0x402000});
  t.stack(100, 1, 4, {0x7f0000001000});
  t.alloc(100, 10, 0x1000, 100, 1);
  t.alloc(100, 11, 0x2000, 100, 1);
  t.alloc(100, 12, 0x3000, 1000, 2);  // the peak: 100 + 100 + 1000 live
  t.free(100, 13, 0x3000);
  t.alloc(100, 14, 0x4000, 500, 3);
  t.free(100, 15, 0x4000);          // temporary
  t.alloc(100, 16, 0x5000, 7, 4);
  t.alloc(100, 17, 0x6000, 30, 0);  // no stack
  t.alloc(100, 18, 0x7000, 40, 9);  // a stack the trace lacks
  t.alloc(100, 19, 0x8000, 50, 9);
  return t;
}

TEST(HeapFunctions, SitesWithOneFirstAddressAreOneRowWithTheirSums) {
  an::HeapAnalysis heap;
  SpoorTrace t = merged_trace();
  Loaded l = load(t, {&heap});
  ASSERT_EQ(heap.profiles().size(), 1u);
  const an::HeapProfile& p = heap.profiles()[0];
  ASSERT_EQ(p.sites.size(), 6u);
  an::SymbolizedStacks symbols(l.model);
  const std::vector<an::HeapFunction> rows = an::heap_functions(p, symbols);
  ASSERT_EQ(rows.size(), 5u);

  // By bytes allocated: the merged row (1200), then 3's (500), the
  // unknown stack's (90), no stack (30), the raw address (7).
  const an::HeapFunction& merged = rows[0];
  EXPECT_EQ(merged.kind, an::AllocatorKind::frame);
  EXPECT_EQ(merged.frame.function, "");
  EXPECT_EQ(merged.frame.module, "/nonexistent/prog");
  EXPECT_EQ(merged.frame.module_offset, 0x1005u);
  EXPECT_EQ(merged.frame.function_or_location(), "prog+0x1005");
  EXPECT_EQ(merged.stacks, 2u);
  EXPECT_EQ(merged.totals.allocated_bytes, 1200u);
  EXPECT_EQ(merged.totals.calls, 3u);
  EXPECT_EQ(merged.totals.peak_bytes, 1200u);
  EXPECT_EQ(merged.totals.leaked_bytes, 200u);
  EXPECT_EQ(merged.totals.leaked_blocks, 2u);
  EXPECT_EQ(merged.top_site.stack, an::stack_key(l.model.process(100)->images[0], 2)) << "1000 bytes beat 200";
  EXPECT_EQ(merged.top_site.allocated_bytes, 1000u);

  EXPECT_EQ(rows[1].frame.function_or_location(), "prog+0x1100");
  EXPECT_EQ(rows[1].totals.temporary, 1u);
  EXPECT_EQ(rows[1].stacks, 1u);

  EXPECT_EQ(rows[2].kind, an::AllocatorKind::unknown_stack);
  EXPECT_EQ(rows[2].totals.allocated_bytes, 90u);
  EXPECT_EQ(rows[2].totals.calls, 2u);
  EXPECT_EQ(rows[2].stacks, 1u);

  EXPECT_EQ(rows[3].kind, an::AllocatorKind::no_stack);
  EXPECT_EQ(rows[3].totals.allocated_bytes, 30u);
  EXPECT_EQ(rows[3].top_site.stack, 0u);

  EXPECT_EQ(rows[4].kind, an::AllocatorKind::frame);
  EXPECT_EQ(rows[4].frame.module, "");
  EXPECT_EQ(rows[4].frame.function_or_location(), "0x7f0000001000");
}

TEST(HeapFunctions, FirstFrameIsTheWholeStacksFirstFrame) {
  an::HeapAnalysis heap;
  SpoorTrace t = merged_trace();
  Loaded l = load(t, {&heap});
  an::SymbolizedStacks symbols(l.model);
  const an::StackKey key = an::stack_key(l.model.process(100)->images[0], 1);
  const std::optional<an::Frame> first = symbols.first_frame(key);
  ASSERT_TRUE(first.has_value());
  const std::vector<an::Frame>& whole = symbols.frames(key);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(first->label(), whole[0].label());
  EXPECT_EQ(first->address, whole[0].address);
  EXPECT_EQ(symbols.first_frame(key)->label(), first->label()) << "memoized stack: the same frame";
  EXPECT_FALSE(symbols.first_frame(0).has_value());
  EXPECT_FALSE(symbols.first_frame(an::stack_key(l.model.process(100)->images[0], 9)).has_value());
}

TEST(HeapFunctions, FramesNotKeptAreTheFramesAStackIsShownWith) {
  // own_frame looks through whole stacks without keeping them; the frames
  // are the same as frames() gives, before and after it kept them.
  SpoorTrace t = merged_trace();
  Loaded l = load(t, {});
  an::SymbolizedStacks symbols(l.model);
  const an::StackKey key = an::stack_key(l.model.process(100)->images[0], 2);
  const std::vector<an::Frame> before = symbols.frames_not_kept(key);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].function_or_location(), "prog+0x1005");
  EXPECT_EQ(before[1].function_or_location(), "prog+0x3000");
  const std::vector<an::Frame>& kept = symbols.frames(key);
  ASSERT_EQ(kept.size(), before.size());
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i].label(), before[i].label());
  EXPECT_EQ(symbols.frames_not_kept(key)[1].label(), kept[1].label());
  EXPECT_TRUE(symbols.frames_not_kept(an::stack_key(l.model.process(100)->images[0], 9)).empty());
}

}  // namespace
