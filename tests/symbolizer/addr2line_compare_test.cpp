// The library's frames against GNU addr2line -a -f -i -C, at every
// instruction of each fixture: function names (demangled), files, lines,
// discriminators and whole inline chains must be the same text.
#include <gtest/gtest.h>

#include "symbolizer_test_support.h"

namespace spoor::symbolizer::test {
namespace {

void expect_same_as_addr2line(const std::string& elf) {
  const std::vector<uint64_t> addresses = code_addresses(elf);
  ASSERT_GT(addresses.size(), 100u) << elf;
  const std::vector<std::string> expected = addr2line_blocks(elf, addresses);
  ASSERT_EQ(expected.size(), addresses.size()) << "addr2line did not answer every address of " << elf;
  Symbolizer symbolizer(addr2line_options());
  const std::vector<std::string> actual = library_blocks(symbolizer, elf, addresses);
  size_t count = 0;
  const std::string diff = differences(expected, actual, &count);
  EXPECT_EQ(count, 0u) << count << " of " << addresses.size() << " addresses differ in " << elf << ":\n" << diff;
}

TEST(SymbolizerMatchesAddr2line, PieWithHeavyInlining) { expect_same_as_addr2line(SPOOR_SYM_PIE); }
TEST(SymbolizerMatchesAddr2line, NonPie) { expect_same_as_addr2line(SPOOR_SYM_NOPIE); }
TEST(SymbolizerMatchesAddr2line, SharedLibrary) { expect_same_as_addr2line(SPOOR_SYM_SHARED); }
TEST(SymbolizerMatchesAddr2line, CProgram) { expect_same_as_addr2line(SPOOR_SYM_C); }

TEST(SymbolizerMatchesAddr2line, InlineChainsAreDeep) {
  // The fixture exists to exercise inline chains: make sure it does.
  Symbolizer symbolizer(addr2line_options());
  size_t deepest = 0, inlined = 0;
  for (uint64_t a : code_addresses(SPOOR_SYM_PIE)) {
    const Location& l = symbolizer.symbolize_file(SPOOR_SYM_PIE, a);
    deepest = std::max(deepest, l.frames.size());
    if (l.frames.size() > 1) ++inlined;
  }
  EXPECT_GE(deepest, 5u);
  EXPECT_GT(inlined, 100u);
}

}  // namespace
}  // namespace spoor::symbolizer::test
