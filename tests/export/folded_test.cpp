// Folded stacks: one line per stack, root first, weights summed.
#include "spoor/export/folded.h"

#include <gtest/gtest.h>

#include "known_model.h"

namespace {

using namespace spoor::exporter;

TEST(Folded, SamplesPerStackRootFirst) {
  EXPECT_EQ(folded_stacks(spoor::test::known_model(), FoldedWeight::kSamples),
            "0xdead;app+0x1400 1\n"
            "main;compute;inner_helper 6\n"
            "main;spin:loop 3\n");
}

TEST(Folded, AllocationWeights) {
  const ExportModel m = spoor::test::known_model();
  EXPECT_EQ(folded_stacks(m, FoldedWeight::kAllocBytes), "main;compute;inner_helper 400\nmain;spin:loop 2048\n");
  EXPECT_EQ(folded_stacks(m, FoldedWeight::kAllocCalls), "main;compute;inner_helper 4\nmain;spin:loop 2\n");
  EXPECT_EQ(folded_stacks(m, FoldedWeight::kLeakedBytes), "main;compute;inner_helper 100\nmain;spin:loop 2048\n");
}

TEST(Folded, StacksThatFoldAlikeAreOneLine) {
  ExportModel m = spoor::test::known_model();
  m.locations.push_back({.module = 0, .address = 0x1108, .frames = {{"inner_helper", "a.c", 11}, {"compute", "a.c", 21}}});
  m.stacks.push_back({.locations = {5, 1}});
  m.cpu_samples.push_back({.pid = 100, .tid = 100, .time_ns = 1, .stack = 3});
  EXPECT_NE(folded_stacks(m, FoldedWeight::kSamples).find("main;compute;inner_helper 7\n"), std::string::npos);
}

TEST(Folded, NamesWithLineBreaksStayOneLine) {
  ExportModel m = spoor::test::known_model();
  m.locations[1].frames[0].function = "operator()\n<lambda>";
  EXPECT_NE(folded_stacks(m, FoldedWeight::kSamples).find("operator() <lambda>;compute"), std::string::npos);
}

TEST(Folded, WeightNames) {
  EXPECT_EQ(folded_weight_from_name("alloc-bytes"), FoldedWeight::kAllocBytes);
  EXPECT_EQ(folded_weight_from_name("leaked-bytes"), FoldedWeight::kLeakedBytes);
  EXPECT_FALSE(folded_weight_from_name("bytes"));
}

}  // namespace
