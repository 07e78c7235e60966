// Debug info that is not in the binary: found by build ID under a
// --debug-dir, by .gnu_debuglink beside the binary, and split DWARF (.dwo).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "symbolizer_test_support.h"

namespace spoor::symbolizer::test {
namespace {

const std::string kVariants = SPOOR_SYM_VARIANTS;

// Frames of the stripped copy must be those addr2line reads from the
// original, unstripped binary.
void expect_same_as_original(Symbolizer& symbolizer, const std::string& stripped) {
  const std::vector<uint64_t> addresses = code_addresses(SPOOR_SYM_PIE, 3);
  const std::vector<std::string> expected = addr2line_blocks(SPOOR_SYM_PIE, addresses);
  const std::vector<std::string> actual = library_blocks(symbolizer, stripped, addresses);
  size_t count = 0;
  const std::string diff = differences(expected, actual, &count);
  EXPECT_EQ(count, 0u) << diff;
  EXPECT_TRUE(symbolizer.problems().empty()) << symbolizer.problems()[0].message;
}

TEST(SeparateDebugInfo, FoundByBuildIdUnderDebugDir) {
  Options options = addr2line_options();
  options.debug_dirs.push_back(kVariants + "/buildid/debug");
  Symbolizer symbolizer(options);
  expect_same_as_original(symbolizer, kVariants + "/buildid/prog");
}

TEST(SeparateDebugInfo, FoundByGnuDebuglinkBesideTheBinary) {
  Symbolizer symbolizer(addr2line_options());
  expect_same_as_original(symbolizer, kVariants + "/debuglink/prog");
}

TEST(SeparateDebugInfo, WithoutItTheModuleIsReportedOnce) {
  Symbolizer symbolizer;
  const std::string stripped = kVariants + "/buildid/prog";
  for (uint64_t a : code_addresses(SPOOR_SYM_PIE, 50)) symbolizer.symbolize_file(stripped, a);
  ASSERT_EQ(symbolizer.problems().size(), 1u);
  EXPECT_EQ(symbolizer.problems()[0].path, stripped);
  EXPECT_NE(symbolizer.problems()[0].message.find("no debug info"), std::string::npos)
      << symbolizer.problems()[0].message;
}

// Without symbols, an address still says which function it is in: where
// the call frame information entry that covers it begins, which is where
// the unstripped file's symbol for that function begins.
TEST(SeparateDebugInfo, WithoutItAnAddressIsPlacedInItsFunctionByItsCallFrameInformation) {
  struct Function {
    uint64_t start, size;
  };
  std::vector<Function> functions;  // from the unstripped file: nm -S's code symbols with a size
  std::istringstream nm(run("nm -S '" SPOOR_SYM_PIE "'").out);
  for (std::string line; std::getline(nm, line);) {
    std::istringstream fields(line);
    std::string start, size, type;
    if (!(fields >> start >> size >> type) || (type != "t" && type != "T")) continue;
    functions.push_back({std::stoull(start, nullptr, 16), std::stoull(size, nullptr, 16)});
  }
  ASSERT_GT(functions.size(), 5u);
  Symbolizer symbolizer;
  const std::string stripped = kVariants + "/buildid/prog";
  size_t placed = 0, in_functions = 0;
  std::set<uint64_t> starts;
  for (uint64_t a : code_addresses(SPOOR_SYM_PIE, 3)) {
    const auto f = std::find_if(functions.begin(), functions.end(),
                                [a](const Function& fn) { return a >= fn.start && a < fn.start + fn.size; });
    const Location& l = symbolizer.symbolize_file(stripped, a);
    if (l.resolved) continue;  // an exported symbol names it
    if (f == functions.end()) continue;  // the PLT, crt's code
    ++in_functions;
    if (!l.code_start_known) continue;  // crt's functions without call frame information
    EXPECT_EQ(l.code_start, f->start) << std::hex << "address 0x" << a;
    starts.insert(l.code_start);
    ++placed;
  }
  EXPECT_GT(placed, in_functions / 2) << "of " << in_functions << " addresses in unnamed functions";
  EXPECT_GT(starts.size(), 3u) << "addresses of several functions";
}

TEST(SeparateDebugInfo, MiniDebugInfoNamesFunctionsTheDynamicSymbolsLack) {
  // main is not exported from a PIE: only .gnu_debugdata's table has it.
  const std::string main_address = run("nm '" SPOOR_SYM_PIE "' | awk '$3 == \"main\" { print $1 }'").out;
  ASSERT_FALSE(main_address.empty());
  Symbolizer symbolizer;
  const Location& l = symbolizer.symbolize_file(kVariants + "/minidebuginfo/prog", std::stoull(main_address, nullptr, 16) + 4);
  EXPECT_TRUE(l.resolved);
  EXPECT_EQ(l.frames[0].function, "main");
  EXPECT_EQ(l.frames[0].line, 0u);  // symbols only: no lines
}

TEST(SeparateDebugInfo, SplitDwarfResolvesAsTheSameCodeWithInlineDwarf) {
  // The split build's code is the ordinary build's, byte for byte (the
  // same compiler flags but -gsplit-dwarf): the same address must give the
  // same frames, read from the .dwo files.
  const CommandResult text_split = run("objcopy -O binary --only-section=.text '" SPOOR_SYM_SPLIT "' /dev/stdout");
  const CommandResult text_plain = run("objcopy -O binary --only-section=.text '" SPOOR_SYM_PIE "' /dev/stdout");
  ASSERT_FALSE(text_plain.out.empty());
  if (text_split.out != text_plain.out) GTEST_SKIP() << "the compiler laid out the split build's code differently";
  Symbolizer split;
  Symbolizer plain;
  size_t inlined = 0;
  for (uint64_t a : code_addresses(SPOOR_SYM_PIE, 2)) {
    const Location& s = split.symbolize_file(SPOOR_SYM_SPLIT, a);
    const Location& p = plain.symbolize_file(SPOOR_SYM_PIE, a);
    ASSERT_EQ(s.frames.size(), p.frames.size()) << std::hex << a;
    for (size_t i = 0; i < s.frames.size(); ++i) {
      EXPECT_EQ(s.frames[i].function, p.frames[i].function) << std::hex << a;
      EXPECT_EQ(s.frames[i].file, p.frames[i].file) << std::hex << a;
      EXPECT_EQ(s.frames[i].line, p.frames[i].line) << std::hex << a;
    }
    if (s.frames.size() > 1) ++inlined;
  }
  EXPECT_GT(inlined, 50u);
  EXPECT_TRUE(split.problems().empty()) << split.problems()[0].message;
}

}  // namespace
}  // namespace spoor::symbolizer::test
