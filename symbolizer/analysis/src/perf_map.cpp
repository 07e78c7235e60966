#include "spoor/analysis/perf_map.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

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

std::unique_ptr<PerfMap> read_perf_map(const std::string& dir, uint32_t pid, const RecordingSpan& span,
                                       std::vector<symbolizer::ModuleProblem>& problems) {
  if (dir.empty()) return nullptr;
  const std::string path = dir + "/perf-" + std::to_string(pid) + ".map";
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return nullptr;
  constexpr off_t kMostBytes = off_t{1} << 30;
  if (!S_ISREG(st.st_mode)) {
    problems.push_back({path, "not read: not a regular file"});
    return nullptr;
  }
  if (st.st_size > kMostBytes) {
    problems.push_back({path, "not read: larger than " + std::to_string(kMostBytes >> 20) + " MiB"});
    return nullptr;
  }
  if (st.st_uid != getuid() && st.st_uid != 0) {
    problems.push_back({path, "not read: owned by another user (uid " + std::to_string(st.st_uid) + ")"});
    return nullptr;
  }
  if (span.known) {
    constexpr int64_t kSecond = 1'000'000'000;
    const int64_t written = int64_t{st.st_mtim.tv_sec} * kSecond + st.st_mtim.tv_nsec;
    if (written < span.first_realtime_ns - 2 * kSecond || written > span.last_realtime_ns + 60 * kSecond) {
      problems.push_back({path, "not read: written " +
                                    std::string(written < span.first_realtime_ns ? "before" : "after") +
                                    " this recording (by another process with pid " + std::to_string(pid) +
                                    "?); code in no module stays unnamed"});
      return nullptr;
    }
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    problems.push_back({path, "cannot be read; code in no module stays unnamed"});
    return nullptr;
  }
  return parse_perf_map(path, text.str(), problems);
}

std::unique_ptr<PerfMap> parse_perf_map(const std::string& path, std::string_view text,
                                        std::vector<symbolizer::ModuleProblem>& problems) {
  auto map = std::make_unique<PerfMap>();
  map->parse(text);
  if (map->skipped_lines() > 0)
    problems.push_back(
        {path, "skipped " + std::to_string(map->skipped_lines()) + " line(s) that are not \"START SIZE NAME\" (hex)"});
  return map;
}

}  // namespace spoor::analysis
