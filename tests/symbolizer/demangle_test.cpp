// Names as the symbolizer prints them: C++ as addr2line -C does, Rust's
// two manglings as c++filt does, anything else as it is.
#include <gtest/gtest.h>

#include "demangle.h"

namespace {

using spoor::symbolizer::demangle;

TEST(Demangle, CppNamesAsAddr2lineShowsThem) {
  EXPECT_EQ(demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"), "std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_EQ(demangle("_ZN3foo3barEv"), "foo::bar()");
}

TEST(Demangle, RustV0Names) {
  EXPECT_EQ(demangle("_RNvNtCslNYArtu3iFV_5alloc5alloc5alloc"), "alloc::alloc::alloc");
  EXPECT_EQ(demangle("_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle"),
            "<str>::trim_start_matches::<&str>");
}

TEST(Demangle, RustLegacyNamesLoseTheirHashAndEscapes) {
  EXPECT_EQ(demangle("_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$7reserve17h3771de85bd5702eeE"),
            "hashbrown::raw::RawTable<T,A>::reserve");
}

TEST(Demangle, OtherNamesStayAsTheyAre) {
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("f"), "f") << "not the type float";
  EXPECT_EQ(demangle("_Rgarbage"), "_Rgarbage");
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
  EXPECT_EQ(demangle(nullptr), "");
}

}  // namespace
