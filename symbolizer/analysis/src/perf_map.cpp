#include "perf_map.h"

#include <algorithm>
#include <charconv>

namespace spoor::analysis {
namespace {

// A hex number with an optional 0x, then one space; false otherwise.
bool take_hex(std::string_view& text, uint64_t& value) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end == text.data() || end == text.data() + text.size() || *end != ' ') return false;
  text.remove_prefix(static_cast<size_t>(end - text.data()) + 1);
  return true;
}

}  // namespace

void PerfMap::parse(std::string_view text) {
  uint32_t line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    uint64_t start = 0, size = 0;
    if (!take_hex(line, start) || !take_hex(line, size) || line.empty() || size == 0 || start + size < start) {
      ++skipped_;
      continue;
    }
    entries_.push_back({start, start + size, line_number++, std::string(line)});
    longest_ = std::max(longest_, size);
  }
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.start != b.start ? a.start < b.start : a.line < b.line;
  });
}

const std::string* PerfMap::name_at(uint64_t address) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                             [](uint64_t a, const Entry& e) { return a < e.start; });
  const Entry* best = nullptr;
  while (it != entries_.begin()) {
    --it;
    if (address - it->start >= longest_) break;  // no earlier line reaches the address
    if (address < it->end && (best == nullptr || it->line > best->line)) best = &*it;
  }
  return best != nullptr ? &best->name : nullptr;
}

}  // namespace spoor::analysis
