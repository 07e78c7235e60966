// Text helpers of `spoor report`: sizes in binary units, aligned tables.
#ifndef SPOOR_CLI_REPORT_FORMAT_H
#define SPOOR_CLI_REPORT_FORMAT_H

#include <cstdint>
#include <string>
#include <vector>

#include "spoor/analysis/library_glue.h"

namespace spoor::cli {

// "512 B", "1.50 KiB", "12.3 MiB", "2.00 GiB".
std::string bytes_text(uint64_t bytes);
// "1,234,567".
std::string count_text(uint64_t n);
// "12.5%" of `whole` (0 when whole is 0).
std::string percent_text(uint64_t part, uint64_t whole);
// "12.345 ms": always milliseconds, so a column of times compares at a glance.
std::string ms_text(int64_t ns);

// A C++ name as a table can show it (the JSON form of a report keeps full
// names).
using analysis::short_function;

// A table printed with columns fitted to their widest cell; numbers right-
// aligned, text left-aligned, the last column never padded.
class Table {
 public:
  enum Align { left, right };
  struct Column {
    std::string title;
    Align align;
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  // A line under the last row, indented under its last column (stacks).
  void note(std::string text) { notes_.emplace_back(rows_.size(), std::move(text)); }
  bool empty() const { return rows_.empty(); }
  void print(std::string& out, const std::string& indent = "  ") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::pair<size_t, std::string>> notes_;  // after row index - 1
};

}  // namespace spoor::cli

#endif  // SPOOR_CLI_REPORT_FORMAT_H
