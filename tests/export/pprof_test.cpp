// pprof output read back by `go tool pprof` (the format's reference reader)
// and its raw fields by `protoc --decode_raw`.
#include "spoor/export/pprof.h"

#include <gtest/gtest.h>

#include "decoded_proto.h"
#include "known_model.h"

namespace {

using namespace spoor::exporter;
using spoor::test::run;

// A profile file that removes itself.
struct ProfileFile {
  std::string path;
  ~ProfileFile() { std::remove(path.c_str()); }
};

ProfileFile write_profile(const ExportModel& m, const std::string& name) {
  ProfileFile file{spoor::test::temp_path(name + ".pb.gz")};
  const std::optional<std::string> bytes = pprof_profile(m);
  EXPECT_TRUE(bytes);
  spoor::test::write_file(file.path, bytes.value_or(""));
  return file;
}

// `go tool pprof -top` for one sample type. GOTOOLCHAIN=local keeps go from
// fetching anything; PPROF_TMPDIR keeps it from writing into $HOME.
spoor::test::Process pprof_top(const std::string& path, const std::string& sample_index) {
  return run("GOTOOLCHAIN=local PPROF_TMPDIR=/tmp go tool pprof -top -nodecount=20 -sample_index=" +
             sample_index + " " + path);
}

#define SKIP_WITHOUT(program)                                                                      \
  if (!spoor::test::have_program(program))                                                        \
  GTEST_SKIP() << program << " is not installed (scripts/install-test-deps.sh installs it)"

TEST(Pprof, GoToolPprofReadsCpuSamplesWithTheKnownTopFunction) {
  SKIP_WITHOUT("go");
  const ProfileFile file = write_profile(spoor::test::known_model(), "cpu");
  const spoor::test::Process top = pprof_top(file.path, "cpu");
  ASSERT_EQ(top.status, 0) << top.err;
  // 10 samples of 1 ms.
  EXPECT_NE(top.out.find("of 10ms total"), std::string::npos) << top.out;
  // The first row is the leaf of 6 samples: the inlined function.
  const size_t header = top.out.find("flat  flat%");
  ASSERT_NE(header, std::string::npos) << top.out;
  const std::string first_row = top.out.substr(top.out.find('\n', header) + 1);
  EXPECT_EQ(first_row.rfind("       6ms 60.00% 60.00%", 0), 0u) << top.out;
  EXPECT_NE(first_row.substr(0, first_row.find('\n')).find("inner_helper"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("spin;loop"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("app+0x1400"), std::string::npos) << top.out;
  // main is never a leaf: flat 0, cum all but the unsymbolized sample.
  EXPECT_NE(top.out.find("0     0%   100%        9ms 90.00%  main"), std::string::npos) << top.out;
}

TEST(Pprof, GoToolPprofReadsAllocationAndInUseTotals) {
  SKIP_WITHOUT("go");
  const ProfileFile file = write_profile(spoor::test::known_model(), "heap");
  const spoor::test::Process space = pprof_top(file.path, "alloc_space");
  ASSERT_EQ(space.status, 0) << space.err;
  EXPECT_NE(space.out.find("of 2448B total"), std::string::npos) << space.out;
  const spoor::test::Process objects = pprof_top(file.path, "alloc_objects");
  EXPECT_NE(objects.out.find("of 6 total"), std::string::npos) << objects.out;
  // The default type is the last, inuse_space.
  const spoor::test::Process inuse = run("GOTOOLCHAIN=local PPROF_TMPDIR=/tmp go tool pprof -top " + file.path);
  EXPECT_NE(inuse.out.find("of 2148B total"), std::string::npos) << inuse.out;
  EXPECT_NE(inuse.out.find("inuse_space"), std::string::npos) << inuse.out;
}

TEST(Pprof, WithoutAllocationsTheDefaultTypeIsCpu) {
  SKIP_WITHOUT("go");
  ExportModel m = spoor::test::known_model();
  m.allocations.clear();
  const ProfileFile file = write_profile(m, "cpu-only");
  const spoor::test::Process top = run("GOTOOLCHAIN=local PPROF_TMPDIR=/tmp go tool pprof -top " + file.path);
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_NE(top.out.find("of 10ms total"), std::string::npos) << top.out;
}

TEST(Pprof, TheProfileIsNamedAfterTheFileTheProgramRanNotALinkToIt) {
  SKIP_WITHOUT("go");
  // Run as "python3", a link to python3.11; the shim's library was mapped
  // before the executable was described, so it comes first in the model.
  ExportModel m = spoor::test::known_model();
  m.processes[0].cmdline = {"python3", "-c", "pass"};
  m.processes[0].exe = "/usr/bin/app";
  m.modules.insert(m.modules.begin(), {.pid = 100, .path = "/usr/lib/libspoor-preload.so", .build_id = "ef02",
                                       .start = 0x7f0000, .limit = 0x7f8000, .bias = 0x7f0000});
  for (Location& l : m.locations)
    if (l.module != kNoModule) ++l.module;
  const ProfileFile file = write_profile(m, "named");
  const spoor::test::Process top = pprof_top(file.path, "cpu");
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_EQ(top.out.substr(0, top.out.find('\n')), "File: app") << top.out;
  EXPECT_NE(top.out.find("of 10ms total"), std::string::npos) << top.out;

  // An executable no module is (a trace cut before it was described): the
  // module the command line names, as before.
  m.processes[0].cmdline = {"/usr/bin/app", "--run"};
  m.processes[0].exe = "/usr/bin/gone";
  const ProfileFile by_command = write_profile(m, "named-by-command");
  const spoor::test::Process top2 = pprof_top(by_command.path, "cpu");
  ASSERT_EQ(top2.status, 0) << top2.err;
  EXPECT_EQ(top2.out.substr(0, top2.out.find('\n')), "File: app") << top2.out;
}

TEST(Pprof, RawFieldsFollowTheFormatsRules) {
  SKIP_WITHOUT("protoc");
  std::string error;
  const spoor::test::ProtoNode p = spoor::test::decode_raw(pprof_profile_proto(spoor::test::known_model()), error);
  ASSERT_TRUE(error.empty()) << error;
  // string_table (6) starts with "".
  ASSERT_FALSE(p.all(6).empty());
  EXPECT_EQ(p.all(6)[0]->value, "\"\"");
  EXPECT_EQ(p.all(1).size(), 6u);  // sample types
  EXPECT_EQ(p.all(2).size(), 3u);  // one sample per stack
  EXPECT_EQ(p.all(3).size(), 1u);  // one mapping per module
  EXPECT_EQ(p.all(4).size(), 5u);  // one location per model location
  for (const auto* node : p.all(4)) EXPECT_NE(node->scalar(1), "0") << "location ids are never 0";
  for (const auto* node : p.all(5)) EXPECT_NE(node->scalar(1), "0") << "function ids are never 0";
  // Location 1 holds two lines, the inlined function first.
  const spoor::test::ProtoNode* first = p.all(4)[0];
  ASSERT_EQ(first->all(4).size(), 2u);
  EXPECT_EQ(first->all(4)[0]->scalar(2), "10");
  EXPECT_EQ(first->all(4)[1]->scalar(2), "20");
}

TEST(Pprof, OutputIsGzip) {
  const std::optional<std::string> bytes = pprof_profile(spoor::test::known_model());
  ASSERT_TRUE(bytes && bytes->size() > 10);
  EXPECT_EQ(static_cast<unsigned char>((*bytes)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*bytes)[1]), 0x8b);
}

}  // namespace
