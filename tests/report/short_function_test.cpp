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
