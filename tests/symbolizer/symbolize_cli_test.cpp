// spoor symbolize -e: output diffs line by line against GNU addr2line with
// the same flags; bad input ends with a message and a non-zero status.
#include <gtest/gtest.h>

#include "symbolizer_test_support.h"

namespace spoor::symbolizer::test {
namespace {

const std::string kTool = SPOOR_TOOL;
const std::string kVariants = SPOOR_SYM_VARIANTS;

void expect_same_output(const std::string& elf, const std::string& flags, size_t step) {
  const std::string list = write_addresses(code_addresses(elf, step), "cli_input.txt");
  const CommandResult expected = run("addr2line " + flags + " -e '" + elf + "' < '" + list + "'");
  const CommandResult actual = run(kTool + " symbolize " + flags + " -e '" + elf + "' < '" + list + "'");
  ASSERT_EQ(actual.status, 0);
  ASSERT_FALSE(expected.out.empty());
  if (expected.out == actual.out) return;
  // Show where they part.
  std::istringstream a(expected.out), b(actual.out);
  std::string la, lb;
  int line = 0;
  while (std::getline(a, la) && std::getline(b, lb)) {
    ++line;
    if (la != lb) FAIL() << "flags '" << flags << "' line " << line << ":\naddr2line: " << la << "\nspoor:     " << lb;
  }
  FAIL() << "flags '" << flags << "': outputs differ in length";
}

TEST(SymbolizeCli, SameAsAddr2lineFunctionsInlinesDemangled) { expect_same_output(SPOOR_SYM_PIE, "-f -i -C", 1); }
TEST(SymbolizeCli, SameAsAddr2linePrettyWithAddresses) { expect_same_output(SPOOR_SYM_PIE, "-a -p -f -i -C", 2); }
TEST(SymbolizeCli, SameAsAddr2lineMangledWithoutInlines) { expect_same_output(SPOOR_SYM_NOPIE, "-f", 2); }
TEST(SymbolizeCli, SameAsAddr2lineLinesOnly) { expect_same_output(SPOOR_SYM_SHARED, "", 1); }
TEST(SymbolizeCli, SameAsAddr2lineLongFlagsAndBasenames) {
  expect_same_output(SPOOR_SYM_C, "--addresses --functions --inlines --demangle --pretty-print --basenames", 1);
}

TEST(SymbolizeCli, AddressesAsArgumentsWithGroupedFlags) {
  const CommandResult expected = run("addr2line -fiC -e '" SPOOR_SYM_PIE "' 0x0 1139 0x2000");
  const CommandResult actual = run(kTool + " symbolize -fiC -e'" SPOOR_SYM_PIE "' 0x0 1139 0x2000");
  EXPECT_EQ(actual.status, 0);
  EXPECT_EQ(actual.out, expected.out);
}

TEST(SymbolizeCli, MissingElfIsAnError) {
  const CommandResult r = run(kTool + " symbolize -e /nonexistent/prog 0x1000 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("cannot read '/nonexistent/prog'"), std::string::npos) << r.out;
}

TEST(SymbolizeCli, NotAnElfIsAnError) {
  const CommandResult r = run(kTool + " symbolize -e '" + kVariants + "/not-elf/prog' 0x1000 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("not an ELF file"), std::string::npos) << r.out;
}

TEST(SymbolizeCli, BadAddressIsAnError) {
  const CommandResult r = run(kTool + " symbolize -e '" SPOOR_SYM_PIE "' 0x10zz 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("bad address '0x10zz'"), std::string::npos) << r.out;
}

TEST(SymbolizeCli, UnknownOptionIsAUsageError) {
  const CommandResult r = run(kTool + " symbolize -Q -e '" SPOOR_SYM_PIE "' 0x1000 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown option '-Q'"), std::string::npos) << r.out;
}

TEST(SymbolizeCli, CorruptDwarfEndsCleanly) {
  const std::string list = write_addresses(code_addresses(SPOOR_SYM_PIE, 5), "corrupt_input.txt");
  const CommandResult r =
      run(kTool + " symbolize -f -i -C -e '" + kVariants + "/corrupt-dwarf/prog' < '" + list + "' 2>&1");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << "status " << r.status << "\n" << r.out.substr(0, 2000);
}

TEST(SymbolizeCli, DebugDirFindsStrippedBinarysDebugInfo) {
  const std::string main_address = run("nm '" SPOOR_SYM_PIE "' | awk '$3 == \"main\" { print $1 }'").out;
  ASSERT_FALSE(main_address.empty());
  const std::string address = main_address.substr(0, main_address.find('\n'));
  const CommandResult r = run(kTool + " symbolize -f -e '" + kVariants + "/buildid/prog' --debug-dir '" + kVariants +
                              "/buildid/debug' " + address);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.substr(0, 5), "main\n") << r.out;
  EXPECT_NE(r.out.find("inline_heavy.cpp:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace spoor::symbolizer::test
