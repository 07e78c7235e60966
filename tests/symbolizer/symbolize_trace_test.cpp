// spoor symbolize --trace on a trace spoor record just made of the -O2 -g
// fixture: every stack printed with its frames, the program's own resolved
// to its functions and lines, inline chains included.
#include <gtest/gtest.h>

#include "symbolizer_test_support.h"

namespace spoor::symbolizer::test {
namespace {

const std::string kTool = SPOOR_TOOL;

TEST(SymbolizeTrace, StacksOfARecordedProgramResolveToItsSource) {
  const std::string trace = testing::TempDir() + std::to_string(getpid()) + ".symbolize.spoor";
  const CommandResult record = run(kTool + " record -o '" + trace + "' -- '" SPOOR_SYM_PIE "' a b c 2>&1");
  ASSERT_EQ(record.status, 0) << record.out;
  const CommandResult r = run(kTool + " symbolize --trace '" + trace + "' 2>/dev/null");
  std::remove(trace.c_str());
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("process "), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("  stack 1"), std::string::npos) << r.out.substr(0, 2000);
  // Allocations in main's inlined std::vector/std::map code.
  EXPECT_NE(r.out.find("main at " + std::string(SPOOR_SYM_SOURCE_DIR) + "/inline_heavy.cpp:"), std::string::npos)
      << r.out.substr(0, 4000);
  EXPECT_NE(r.out.find("(inlined by) "), std::string::npos);
}

// The recorded program replaced since by another build at the same path
// (an upgrade): its frames are named from the recorded build, found by its
// build ID in a --debug-dir's build-id tree, never from the new file.
TEST(SymbolizeTrace, AProgramReplacedSinceRecordingIsNamedFromItsBuildId) {
  const std::string program = spoor::test::test_temp_path("replaced_program");
  const std::string trace = spoor::test::test_temp_path("replaced.spoor");
  ASSERT_EQ(run("cp '" SPOOR_SYM_PIE "' '" + program + "'").status, 0);
  const CommandResult record = run(kTool + " record -o '" + trace + "' -p heap -- '" + program + "' a b 2>&1");
  ASSERT_EQ(record.status, 0) << record.out;
  ASSERT_EQ(run("cp '" SPOOR_SYM_C "' '" + program + "'").status, 0);

  const CommandResult changed = run(kTool + " symbolize --trace '" + trace + "' 2>&1");
  EXPECT_EQ(changed.out.find("main at " + std::string(SPOOR_SYM_SOURCE_DIR) + "/inline_heavy.cpp:"), std::string::npos);
  EXPECT_NE(changed.out.find("the file changed since recording"), std::string::npos) << changed.out.substr(0, 3000);

  const CommandResult found = run(kTool + " symbolize --trace '" + trace + "' --debug-dir '" SPOOR_SYM_VARIANTS
                                  "/buildid/debug' 2>&1");
  EXPECT_EQ(found.status, 0);
  EXPECT_NE(found.out.find("main at " + std::string(SPOOR_SYM_SOURCE_DIR) + "/inline_heavy.cpp:"), std::string::npos)
      << found.out.substr(0, 3000);
  EXPECT_EQ(found.out.find("the file changed since recording"), std::string::npos);
}

TEST(SymbolizeTrace, UnreadableTraceIsAnError) {
  const CommandResult r = run(kTool + " symbolize --trace /nonexistent/trace.spoor 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent/trace.spoor"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace spoor::symbolizer::test
