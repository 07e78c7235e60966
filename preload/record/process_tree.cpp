#include "process_tree.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace spoor::record {

ProcStat proc_stat(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const size_t paren = line.rfind(')');  // the name may hold spaces and ')'
  if (paren == std::string::npos || paren + 2 >= line.size()) return {};
  ProcStat s;
  const char state = line[paren + 2];
  s.running = state != 'Z' && state != 'X';
  // Fields after the name: 3 is the state, 4 the parent; 22 the start time.
  s.ppid = static_cast<uint32_t>(std::strtoul(line.c_str() + paren + 4, nullptr, 10));
  size_t at = paren + 2;
  for (int field = 3; field < 22 && at != std::string::npos; ++field) at = line.find(' ', at + 1);
  if (at != std::string::npos) s.start_time = std::strtoull(line.c_str() + at + 1, nullptr, 10);
  return s;
}

std::vector<pid_t> running_below(const std::vector<pid_t>& roots) {
  std::multimap<pid_t, pid_t> children;  // parent -> child, of the running processes
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    char* end = nullptr;
    const unsigned long pid = std::strtoul(name.c_str(), &end, 10);
    if (name.empty() || *end != '\0' || pid == 0) continue;
    const ProcStat s = proc_stat(static_cast<uint32_t>(pid));
    if (s.running) children.emplace(static_cast<pid_t>(s.ppid), static_cast<pid_t>(pid));
  }
  std::vector<pid_t> below, todo = roots;
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      if (std::find(below.begin(), below.end(), it->second) != below.end()) continue;
      below.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  std::sort(below.begin(), below.end());
  return below;
}

}  // namespace spoor::record
