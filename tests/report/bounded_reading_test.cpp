// Every command that reads a trace keeps only a few of its expanded
// COMPRESSED blocks (symbolizer/cli/trace_report.h): what outlives an event
// (stacks, paths, names) is copied out of it. With SPOOR_READ_MEMORY_MIB=0
// a block is dropped the moment no stream is reading it, so anything that
// still pointed into it would print garbage here, or fail under ASan.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "run_command.h"

namespace {

using spoor::test::Process;
using spoor::test::run;

const std::string kSpoor = SPOOR_TOOL;

class BoundedReading : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string base = spoor::test::temp_path("bounded-reading");
    trace_ = new std::string(base + ".spoor");
    // Three runs of the demo 0.6 s apart: the recorder packs what came
    // within 0.5 s into one COMPRESSED block, so the trace has several, and
    // the stacks, modules and files of the first are used in the others.
    const std::string demo = std::string(SPOOR_DEMO) + " " + base + "-demo.spoor 4000 " + base + "-access.log";
    const Process p = run(kSpoor + " record -o " + *trace_ + " -- sh -c '" + demo + " && sleep 0.6 && " + demo +
                          " && sleep 0.6 && " + demo + "' >/dev/null");
    ASSERT_EQ(p.status, 0) << p.err;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove(*trace_);
    delete trace_;
  }

  // The command's output with no expanded block kept, and with all kept.
  static void expect_same_output(const std::string& command) {
    SCOPED_TRACE(command);
    const Process bounded = run("SPOOR_READ_MEMORY_MIB=0 " + kSpoor + " " + command);
    const Process whole = run("SPOOR_READ_MEMORY_MIB=100000 " + kSpoor + " " + command);
    EXPECT_EQ(bounded.status, 0) << bounded.err;
    EXPECT_EQ(whole.status, 0) << whole.err;
    EXPECT_GT(bounded.out.size(), 100u);
    EXPECT_TRUE(bounded.out == whole.out) << "outputs differ; bounded:\n" << bounded.out.substr(0, 2000);
  }

  static std::string* trace_;
};
std::string* BoundedReading::trace_ = nullptr;

TEST_F(BoundedReading, TheTraceHoldsSeveralCompressedBlocks) {
  const Process info = run(kSpoor + " info " + *trace_);
  ASSERT_EQ(info.status, 0) << info.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(info.out, m, std::regex("compressed (\\d+) COMPRESSED blocks"))) << info.out;
  EXPECT_GE(std::stoi(m[1]), 3) << info.out;
}

TEST_F(BoundedReading, ReportPrintsTheSame) {
  expect_same_output("report " + *trace_);
  expect_same_output("report --format json " + *trace_);
}

TEST_F(BoundedReading, DumpAndInfoPrintTheSame) {
  expect_same_output("dump " + *trace_);
  expect_same_output("dump --format jsonl " + *trace_);
  expect_same_output("info " + *trace_);
}

TEST_F(BoundedReading, ExportsAndSymbolizeAreTheSame) {
  expect_same_output("export " + *trace_ + " --format folded");
  expect_same_output("export " + *trace_ + " --format chrome");
  expect_same_output("symbolize --trace " + *trace_);
  expect_same_output("diff " + *trace_ + " " + *trace_);
}

TEST_F(BoundedReading, ABadMemorySettingIsNamedAndIgnored) {
  const Process p = run("SPOOR_READ_MEMORY_MIB=lots " + kSpoor + " info " + *trace_);
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("ignoring SPOOR_READ_MEMORY_MIB='lots'"), std::string::npos) << p.err;
}

}  // namespace
