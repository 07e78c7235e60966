// What the sections of `spoor report`'s text form share: reading the JSON
// document's fields, headings, and naming frames and functions.
// report_text.cpp holds them and every section but the heap's, which is
// report_heap_text.cpp.
#ifndef SPOOR_CLI_REPORT_TEXT_PARTS_H
#define SPOOR_CLI_REPORT_TEXT_PARTS_H

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace spoor::cli::text {

using nlohmann::json;

// A field of `j`, or 0 / "" when it is missing or of another type.
uint64_t u(const json& j, const char* key);
int64_t i64(const json& j, const char* key);
std::string str(const json& j, const char* key);

// `text` on one line of at most `max` bytes (newlines and tabs escaped).
std::string clipped(const std::string& text, size_t max);

// A section's title, underlined.
void heading(std::string& out, const std::string& title);

// A stack frame: its function (short) with file:line, else module+offset.
std::string frame_label(const json& frame);

// A function row's name: the function with its location or offset.
std::string function_cell(const json& function);

// A bar chart of byte counts under the line `title`: one column per value
// and `rows` high, each bar as high as its value over the highest (rounded
// up: any value above 0 shows), the highest labelled; under its axis, the
// times `from` and `to` at its ends. Nothing, title included, when every
// value is 0.
void bar_chart(const std::string& title, const std::vector<uint64_t>& values, uint64_t rows, const std::string& from,
               const std::string& to, std::string& out);

// The heap section (report_heap_text.cpp).
void print_heap(const json& heap, std::string& out);

}  // namespace spoor::cli::text

#endif  // SPOOR_CLI_REPORT_TEXT_PARTS_H
