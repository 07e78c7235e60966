#include "report_format.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace spoor::cli {

std::string bytes_text(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, kUnits[unit]);
  return buf;
}

std::string count_text(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string percent_text(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

std::string ms_text(int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

void Table::print(std::string& out, const std::string& indent) const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].title.size();
  for (const auto& r : rows_)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      const bool last = c + 1 == columns_.size();
      const size_t pad = width[c] - std::min(width[c], cell.size());
      if (columns_[c].align == right) s.append(pad, ' ');
      s += cell;
      if (!last) s.append((columns_[c].align == left ? pad : 0) + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  };
  std::vector<std::string> titles;
  for (const Column& c : columns_) titles.push_back(c.title);
  line(titles);
  // Notes sit under the last column's start.
  size_t note_indent = indent.size();
  for (size_t c = 0; c + 1 < columns_.size(); ++c) note_indent += width[c] + 2;
  size_t next_note = 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    line(rows_[i]);
    for (; next_note < notes_.size() && notes_[next_note].first == i + 1; ++next_note)
      out += std::string(note_indent, ' ') + notes_[next_note].second + "\n";
  }
}

}  // namespace spoor::cli
