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

TEST(SymbolizeTrace, UnreadableTraceIsAnError) {
  const CommandResult r = run(kTool + " symbolize --trace /nonexistent/trace.spoor 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent/trace.spoor"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace spoor::symbolizer::test
