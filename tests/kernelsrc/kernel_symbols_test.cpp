// kernel_symbols.h: kallsyms text parsed, and the functions that hold a
// recording's kernel addresses picked from it.
#include "spoor/kernelsrc/kernel_symbols.h"

#include <gtest/gtest.h>

namespace {

using spoor::kernelsrc::KernelSymbol;
using spoor::kernelsrc::parse_kallsyms;
using spoor::kernelsrc::symbols_holding;

constexpr const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81001000 t do_one_initcall\n"
    "ffffffff81002000 D some_data\n"           // data: never holds code
    "ffffffff81002100 W weak_function\n"
    "ffffffff81003000 A absolute_symbol\n"     // absolute: not text
    "not a line\n"
    "ffffffffc0001000 t ext4_file_read_iter\t[ext4]\n"
    "ffffffff81004000 T copy_page_to_iter\n";  // out of order: sorted on reading

TEST(KernelSymbols, TextSymbolsAreReadSortedWithTheirModules) {
  const std::vector<KernelSymbol> t = parse_kallsyms(kKallsyms);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].name, "_stext");
  EXPECT_EQ(t[1].name, "do_one_initcall");
  EXPECT_EQ(t[2].name, "weak_function");
  EXPECT_EQ(t[3].name, "copy_page_to_iter");
  EXPECT_EQ(t[3].address, 0xffffffff81004000u);
  EXPECT_EQ(t[3].module, "");
  EXPECT_EQ(t[4].name, "ext4_file_read_iter");
  EXPECT_EQ(t[4].module, "ext4");
}

// kptr_restrict hides the addresses from the reader: every one reads 0.
TEST(KernelSymbols, HiddenAddressesNameNothing) {
  EXPECT_TRUE(parse_kallsyms("0000000000000000 T _stext\n0000000000000000 t do_one_initcall\n").empty());
  EXPECT_TRUE(parse_kallsyms("").empty());
}

TEST(KernelSymbols, EachAddressIsHeldByTheNearestSymbolBelowItOnce) {
  const std::vector<KernelSymbol> t = parse_kallsyms(kKallsyms);
  const std::vector<KernelSymbol> held = symbols_holding(
      t, {0xffffffff81004010, 0xffffffff81001008, 0xffffffff81004abc, 0xffffffff80000000, 0xffffffffc0001234,
          0xffffffff81002050});
  ASSERT_EQ(held.size(), 3u) << "one below every symbol holds nothing; two in copy_page_to_iter are one";
  EXPECT_EQ(held[0].name, "do_one_initcall") << "0x...1002050 is past some_data, which is no text: still in the call";
  EXPECT_EQ(held[1].name, "copy_page_to_iter");
  EXPECT_EQ(held[2].name, "ext4_file_read_iter");
}

}  // namespace
