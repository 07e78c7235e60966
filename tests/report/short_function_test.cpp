// How spoor report's text shortens C++ names for its tables.
#include "report_format.h"

#include <gtest/gtest.h>

using spoor::cli::short_function;

TEST(ShortFunction, TemplateArgumentsParametersAndReturnTypesGo) {
  EXPECT_EQ(short_function("std::__new_allocator<char>::allocate(unsigned long, void const*)"),
            "std::__new_allocator<...>::allocate");
  EXPECT_EQ(short_function("void std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"
                           "::_M_construct<char*>(char*, char*, std::forward_iterator_tag)"),
            "std::__cxx11::basic_string<...>::_M_construct<...>");
  EXPECT_EQ(short_function("render_page(char const*, unsigned int)"), "render_page");
  EXPECT_EQ(short_function("worker"), "worker");
}

TEST(ShortFunction, OperatorsAnonymousNamespacesAndBracketedNamesStay) {
  EXPECT_EQ(short_function("operator<<(std::ostream&, Point const&)"), "operator<<");
  EXPECT_EQ(short_function("Point::operator<(Point const&) const"), "Point::operator<");
  EXPECT_EQ(short_function("(anonymous namespace)::checksum(std::string const&)"), "(anonymous namespace)::checksum");
  EXPECT_EQ(short_function("[spoor: recording the event]"), "[spoor: recording the event]");
  EXPECT_EQ(short_function(""), "");
}

namespace {

TEST(LibraryGlue, CppAndRustLibraryFramesAreGlueTheProgramsAreNot) {
  using spoor::analysis::is_library_glue;
  EXPECT_TRUE(is_library_glue("std::__new_allocator<char>::allocate(unsigned long, void const*)",
                              "/usr/include/c++/12/bits/new_allocator.h", "/usr/bin/app"));
  EXPECT_TRUE(is_library_glue("operator new(unsigned long)", "", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"));
  EXPECT_TRUE(is_library_glue("alloc::alloc::alloc", "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/alloc/src/alloc.rs",
                              "/tmp/app"));
  EXPECT_TRUE(is_library_glue("hashbrown::raw::RawTable<T,A>::reserve", "/rust/deps/hashbrown-0.16.1/src/raw/mod.rs",
                              "/tmp/app"));
  EXPECT_TRUE(is_library_glue("__rust_alloc", "", "/tmp/app"));
  EXPECT_FALSE(is_library_glue("main::work", "/tmp/app/src/main.rs", "/tmp/app"));
  EXPECT_FALSE(is_library_glue("render_page", "/src/demo.cpp", "/usr/bin/demo"));
  EXPECT_FALSE(is_library_glue("serde_json::de::from_str", "/root/.cargo/registry/src/serde_json-1.0/src/de.rs",
                               "/tmp/app"))
      << "a crate the program depends on is its own code, as a C++ library it links is";
}

}  // namespace
