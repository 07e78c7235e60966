// Slices arranged so begin/end pairs nest on every track.
#include "timeline.h"

#include <gtest/gtest.h>

#include "known_model.h"

namespace {

using namespace spoor::exporter;

std::string edges_text(const std::vector<Slice>& slices, const SliceLane& lane) {
  std::string out;
  for (const SliceEdge& e : lane.edges) out += (out.empty() ? "" : " ") + std::string(e.begin ? "+" : "-") + slices[e.slice].name;
  return out;
}

Slice slice(uint32_t tid, int64_t begin, int64_t end, std::string name) {
  return {.pid = 1, .tid = tid, .begin_ns = begin, .end_ns = end, .name = std::move(name), .category = {}, .args = {}};
}

TEST(NestSlices, ChildrenCloseBeforeTheirParentAndSiblingsInTurn) {
  const std::vector<Slice> s = {slice(1, 0, 100, "a"), slice(1, 10, 20, "b"), slice(1, 20, 30, "c"),
                                slice(1, 30, 100, "d")};
  const std::vector<SliceLane> lanes = nest_slices(s);
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_EQ(edges_text(s, lanes[0]), "+a +b -b +c -c +d -d -a");
}

TEST(NestSlices, EqualBeginsPutTheLongerSliceOutside) {
  const std::vector<Slice> s = {slice(1, 0, 10, "short"), slice(1, 0, 50, "long"), slice(1, 0, 0, "empty")};
  const std::vector<SliceLane> lanes = nest_slices(s);
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_EQ(edges_text(s, lanes[0]), "+long +short +empty -empty -short -long");
}

TEST(NestSlices, AnOverlappingSliceGoesToAnotherLane) {
  const std::vector<Slice> s = {slice(1, 0, 100, "a"), slice(1, 50, 150, "b"), slice(1, 120, 130, "c")};
  const std::vector<SliceLane> lanes = nest_slices(s);
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(lanes[0].lane, 0u);
  EXPECT_EQ(edges_text(s, lanes[0]), "+a -a +c -c");
  EXPECT_EQ(lanes[1].lane, 1u);
  EXPECT_EQ(edges_text(s, lanes[1]), "+b -b");
}

TEST(NestSlices, ThreadsHaveLanesOfTheirOwn) {
  const std::vector<Slice> s = {slice(2, 0, 10, "x"), slice(1, 5, 20, "y"), slice(2, 5, 15, "z")};
  const std::vector<SliceLane> lanes = nest_slices(s);
  ASSERT_EQ(lanes.size(), 3u);
  EXPECT_EQ(lanes[0].tid, 1u);
  EXPECT_EQ(lanes[1].tid, 2u);
  EXPECT_EQ(edges_text(s, lanes[1]), "+x -x");
  EXPECT_EQ(lanes[2].tid, 2u);
  EXPECT_EQ(lanes[2].lane, 1u);
}

TEST(Timeline, ThreadsOnlyEventsMentionAreListedToo) {
  ExportModel m = spoor::test::known_model();
  m.cpu_samples.push_back({.pid = 200, .tid = 201, .time_ns = 1, .stack = 0});
  const std::vector<Thread> threads = timeline_threads(m);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0].name, "app");
  EXPECT_EQ(threads[2].tid, 201u);
  EXPECT_EQ(threads[2].name, "");
  const std::vector<Process> processes = timeline_processes(m);
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[1].pid, 200u);
}

TEST(FrameLabels, RootFirstWithInlinedFunctionsAfterTheirCaller) {
  const ExportModel m = spoor::test::known_model();
  EXPECT_EQ(stack_labels_root_first(m, m.stacks[0]), (std::vector<std::string>{"main", "compute", "inner_helper"}));
  EXPECT_EQ(stack_labels_root_first(m, m.stacks[2]), (std::vector<std::string>{"0xdead", "app+0x1400"}));
}

}  // namespace
