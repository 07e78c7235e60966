// kernel_symbols.h: the functions of a kallsyms text that hold a
// recording's kernel addresses.
#include "spoor/kernelsrc/kernel_symbols.h"

#include <gtest/gtest.h>

namespace {

using spoor::kernelsrc::kernel_symbols_holding;
using spoor::kernelsrc::KernelSymbol;

constexpr const char* kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81001000 t do_one_initcall\n"
    "ffffffff81002000 D some_data\n"           // data: never holds code
    "ffffffff81002100 W weak_function\n"
    "ffffffff81003000 A absolute_symbol\n"     // absolute: not text
    "not a line\n"
    "ffffffffc0001000 t ext4_file_read_iter\t[ext4]\n"
    "ffffffff81004000 T copy_page_to_iter\n";  // out of order: sorted on reading

std::vector<std::string> names(const std::vector<KernelSymbol>& symbols) {
  std::vector<std::string> out;
  for (const KernelSymbol& s : symbols) out.push_back(s.name + (s.module.empty() ? "" : " [" + s.module + "]"));
  return out;
}

TEST(KernelSymbols, EachAddressIsHeldByTheNearestTextSymbolBelowItOnce) {
  const std::vector<KernelSymbol> held = kernel_symbols_holding(
      kKallsyms, {0xffffffff81004010, 0xffffffff81001008, 0xffffffff81004abc, 0xffffffff80000000, 0xffffffffc0001234,
                  0xffffffff81002050, 0xffffffff81003008});
  // Below every symbol: none; two in copy_page_to_iter: one; past
  // some_data (no text) still in do_one_initcall; past the absolute
  // symbol, in weak_function.
  EXPECT_EQ(names(held), (std::vector<std::string>{"do_one_initcall", "weak_function", "copy_page_to_iter",
                                                   "ext4_file_read_iter [ext4]"}));
  ASSERT_EQ(held.size(), 4u);
  EXPECT_EQ(held[2].address, 0xffffffff81004000u);
  EXPECT_EQ(held[2].module, "");
}

// kptr_restrict hides the addresses from the reader: every one reads 0.
TEST(KernelSymbols, HiddenAddressesNameNothing) {
  EXPECT_TRUE(kernel_symbols_holding("0000000000000000 T _stext\n0000000000000000 t do_one_initcall\n", {0, 1, 5})
                  .empty());
  EXPECT_TRUE(kernel_symbols_holding("", {0xffffffff81000000}).empty());
  EXPECT_TRUE(kernel_symbols_holding(kKallsyms, {}).empty());
}

TEST(KernelSymbols, ThisMachinesKallsymsIsReadWhole) {
  const std::string text = spoor::kernelsrc::read_kallsyms();
  if (text.empty()) GTEST_SKIP() << "/proc/kallsyms cannot be read here";
  EXPECT_EQ(text.back(), '\n') << "every line, the last one whole";
  EXPECT_GT(text.size(), 1u << 20) << "more than one read's piece";
}

}  // namespace
