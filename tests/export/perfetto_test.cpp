// Perfetto output decoded by `protoc --decode_raw`: the packet structure
// and the field numbers the upstream protos give.
#include "spoor/export/perfetto.h"

#include <gtest/gtest.h>

#include <map>

#include "decoded_proto.h"
#include "known_model.h"

namespace {

using namespace spoor::exporter;
using spoor::test::ProtoNode;

class PerfettoTrace : public testing::Test {
 protected:
  void SetUp() override {
    if (!spoor::test::have_program("protoc"))
      GTEST_SKIP() << "protoc is not installed (scripts/install-test-deps.sh installs protobuf-compiler)";
    std::string error;
    root_ = spoor::test::decode_raw(perfetto_trace(spoor::test::known_model()), error);
    ASSERT_TRUE(error.empty()) << error;
    packets_ = root_.all(1);  // Trace.packet = 1
    ASSERT_FALSE(packets_.empty());
  }
  // Packets that carry field `f` (a TracePacket oneof member).
  std::vector<const ProtoNode*> with(int f) const {
    std::vector<const ProtoNode*> out;
    for (const ProtoNode* p : packets_)
      if (p->first(f) != nullptr) out.push_back(p);
    return out;
  }
  ProtoNode root_;
  std::vector<const ProtoNode*> packets_;
};

TEST_F(PerfettoTrace, FirstPacketClearsStateAndCarriesInternedData) {
  const ProtoNode* first = packets_[0];
  EXPECT_EQ(first->scalar(10), "1");  // trusted_packet_sequence_id
  EXPECT_EQ(first->scalar(13), "1");  // SEQ_INCREMENTAL_STATE_CLEARED
  const ProtoNode* interned = first->first(12);
  ASSERT_NE(interned, nullptr);
  std::vector<std::string> names;
  for (const ProtoNode* n : interned->all(5)) names.push_back(n->scalar(2));  // function_names
  EXPECT_EQ(names, (std::vector<std::string>{"\"main\"", "\"compute\"", "\"inner_helper\"", "\"spin;loop\"",
                                             "\"0xdead\"", "\"app+0x1400\""}));
  EXPECT_EQ(interned->all(6).size(), 6u);   // frames: one per inline level
  EXPECT_EQ(interned->all(7).size(), 3u);   // callstacks
  EXPECT_EQ(interned->all(19).size(), 2u);  // mappings: the module and the unknown one
  EXPECT_EQ(interned->all(17).size(), 2u);  // mapping_paths
  EXPECT_EQ(interned->all(17)[0]->scalar(2), "\"/usr/bin/app\"");
  EXPECT_EQ(interned->all(16).size(), 1u);  // build_ids
  // Callstack 1: root first: main, compute, inner_helper.
  EXPECT_EQ(interned->all(7)[0]->scalar(1), "1");
}

TEST_F(PerfettoTrace, ProcessAndThreadTracks) {
  std::map<std::string, const ProtoNode*> processes, threads;
  for (const ProtoNode* p : with(60)) {  // track_descriptor
    const ProtoNode* d = p->first(60);
    if (const ProtoNode* proc = d->first(3)) processes[proc->scalar(1)] = proc;
    if (const ProtoNode* thread = d->first(4)) threads[thread->scalar(2)] = thread;
  }
  ASSERT_EQ(processes.count("100"), 1u);
  EXPECT_EQ(processes["100"]->scalar(6), "\"app\"");
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads["101"]->scalar(1), "100");
  EXPECT_EQ(threads["101"]->scalar(5), "\"worker\"");
}

TEST_F(PerfettoTrace, SlicesAreBeginEndPairsOnTheirThreadsTrack) {
  const std::string main_thread = std::to_string((uint64_t{2} << 56) | (uint64_t{100} << 24) | 100);
  std::vector<std::string> seq;  // on the main thread's track
  for (const ProtoNode* p : with(11)) {
    const ProtoNode* e = p->first(11);
    if (e->scalar(11) != main_thread) continue;
    const std::string type = e->scalar(9);
    if (type == "1") seq.push_back("+" + e->scalar(23) + "@" + p->scalar(8));
    if (type == "2") seq.push_back("-@" + p->scalar(8));
  }
  EXPECT_EQ(seq, (std::vector<std::string>{"+\"outer\"@1000", "+\"read\"@2000", "-@3000", "+\"write\"@4000", "-@5000",
                                           "-@9000"}));
}

TEST_F(PerfettoTrace, OverlappingSliceGoesToAChildTrack) {
  bool found = false;
  for (const ProtoNode* p : with(11)) {
    const ProtoNode* e = p->first(11);
    if (e->scalar(23) != "\"overlap\"") continue;
    found = true;
    const std::string track = e->scalar(11);
    bool described = false;
    for (const ProtoNode* t : with(60))
      if (t->first(60)->scalar(1) == track) {
        described = true;
        EXPECT_EQ(t->first(60)->scalar(5), std::to_string((uint64_t{2} << 56) | (uint64_t{100} << 24) | 100));
      }
    EXPECT_TRUE(described);
  }
  EXPECT_TRUE(found);
}

TEST_F(PerfettoTrace, HeapSizeIsACounterTrackInBytes) {
  std::string counter_track;
  for (const ProtoNode* p : with(60)) {
    const ProtoNode* d = p->first(60);
    if (const ProtoNode* c = d->first(8)) {
      EXPECT_EQ(d->scalar(2), "\"heap size\"");
      EXPECT_EQ(c->scalar(3), "3");  // UNIT_SIZE_BYTES
      counter_track = d->scalar(1);
    }
  }
  ASSERT_FALSE(counter_track.empty());
  std::vector<std::string> values;
  for (const ProtoNode* p : with(11))
    if (p->first(11)->scalar(11) == counter_track) {
      EXPECT_EQ(p->first(11)->scalar(9), "4");  // TYPE_COUNTER
      values.push_back(p->first(11)->scalar(30));
    }
  EXPECT_EQ(values, (std::vector<std::string>{"400", "2148"}));
}

TEST_F(PerfettoTrace, CpuSamplesReferToInternedCallstacks) {
  const std::vector<const ProtoNode*> samples = with(66);
  ASSERT_EQ(samples.size(), 10u);
  std::map<std::string, int> per_callstack;
  for (const ProtoNode* p : samples) {
    EXPECT_EQ(p->scalar(13), "2");  // SEQ_NEEDS_INCREMENTAL_STATE
    EXPECT_EQ(p->first(66)->scalar(2), "100");
    ++per_callstack[p->first(66)->scalar(4)];
  }
  EXPECT_EQ(per_callstack["1"], 6);
  EXPECT_EQ(per_callstack["2"], 3);
  EXPECT_EQ(per_callstack["3"], 1);
  EXPECT_EQ(samples[0]->scalar(8), "1000");
}

// A flow: flow_ids (47) on its first slice's begin, terminating_flow_ids
// (48) on its last's, the same id.
TEST(PerfettoFlow, TheFlowsIdIsOnBothSlicesBeginEvents) {
  if (!spoor::test::have_program("protoc")) GTEST_SKIP() << "protoc is not installed";
  ExportModel m;
  m.slices.push_back({.pid = 100, .tid = 101, .begin_ns = 5000, .end_ns = 5000, .name = "wakes", .category = "sched",
                      .args = {}});
  m.slices.push_back({.pid = 100, .tid = 100, .begin_ns = 7000, .end_ns = 7000, .name = "runs", .category = "sched",
                      .args = {}});
  m.flows.push_back({.from = 0, .to = 1});
  std::string error;
  const ProtoNode root = spoor::test::decode_raw(perfetto_trace(m), error);
  ASSERT_TRUE(error.empty()) << error;
  std::map<std::string, std::pair<std::string, std::string>> begins;  // name -> (time, flow fields)
  for (const ProtoNode* p : root.all(1)) {
    const ProtoNode* e = p->first(11);
    if (e == nullptr || e->scalar(9) != "1") continue;
    begins[e->scalar(23)] = {p->scalar(8), e->scalar(47) + "/" + e->scalar(48)};
  }
  ASSERT_EQ(begins.size(), 2u);
  EXPECT_EQ(begins["\"wakes\""].first, "5000");
  EXPECT_EQ(begins["\"runs\""].first, "7000");
  EXPECT_EQ(begins["\"wakes\""].second, "0x0000000000000001/<none>");
  EXPECT_EQ(begins["\"runs\""].second, "<none>/0x0000000000000001");
}

}  // namespace
