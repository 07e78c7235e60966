#include "cgroup_memory.h"

#include <cstdlib>
#include <fstream>
#include <span>
#include <sstream>
#include <string_view>

#include "spoor/kernelsrc/kernel_symbols.h"

namespace spoor::record {
namespace {

constexpr uint64_t kNoLimit = UINT64_MAX;
// cgroup v1 writes "no limit" as the largest page count times the page
// size: just under 2^63. Nothing real comes near 2^62 bytes.
constexpr uint64_t kV1Unlimited = uint64_t{1} << 62;

// A limit file's value: bytes, or kNoLimit for "max", a v1 "unlimited",
// or a file that is not there or does not hold a number.
uint64_t read_limit(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return kNoLimit;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(word.c_str(), &end, 10);
  if (end == word.c_str() || *end != '\0' || value >= kV1Unlimited) return kNoLimit;
  return value;
}

bool has_option(std::string_view options, std::string_view name) {
  while (!options.empty()) {
    const size_t comma = options.find(',');
    if (options.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    options.remove_prefix(comma + 1);
  }
  return false;
}

struct Mount {
  std::string root;   // the hierarchy's directory mounted there
  std::string point;  // where
};

// The cgroup2 mount (v2) or the v1 mount holding the memory controller.
bool find_mount(const std::string& mountinfo, bool v2, Mount* found) {
  std::istringstream lines(mountinfo);
  std::string line;
  while (std::getline(lines, line)) {
    // id parent major:minor root point options [optional...] - type source super-options
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, device, root, point;
    std::istringstream tail(line.substr(dash + 3));
    std::string type, source, super_options;
    if (!(head >> id >> parent >> device >> root >> point) || !(tail >> type >> source >> super_options)) continue;
    if (v2 ? type == "cgroup2" : type == "cgroup" && has_option(super_options, "memory")) {
      *found = Mount{root, point};
      return true;
    }
  }
  return false;
}

// The process's cgroup in v2 ("0::PATH") or in the v1 memory hierarchy
// ("N:...,memory,...:PATH").
bool find_path(const std::string& proc_cgroup, bool v2, std::string* path) {
  std::istringstream lines(proc_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string_view id(line.data(), first);
    const std::string_view controllers(line.data() + first + 1, second - first - 1);
    const bool wanted = v2 ? id == "0" && controllers.empty() : has_option(controllers, "memory");
    if (wanted) {
      *path = line.substr(second + 1);
      return true;
    }
  }
  return false;
}

// The smallest limit from the process's cgroup up to the mount, in one
// hierarchy.
uint64_t hierarchy_limit(const CgroupSources& sources, bool v2) {
  Mount mount;
  std::string path;
  if (!find_mount(sources.mountinfo, v2, &mount) || !find_path(sources.proc_cgroup, v2, &path)) return kNoLimit;
  std::string relative;
  if (mount.root == "/") relative = path;
  else if (path == mount.root || path.starts_with(mount.root + "/")) relative = path.substr(mount.root.size());
  // else: outside the mounted part; the mount is the process's own cgroup.
  const std::string top = sources.root_prefix + mount.point;
  std::string dir = top + relative;
  while (dir.size() > top.size() && dir.back() == '/') dir.pop_back();
  using Files = std::span<const char* const>;
  static constexpr const char* kV2Files[] = {"memory.max", "memory.high"};
  static constexpr const char* kV1Files[] = {"memory.limit_in_bytes"};
  const Files files = v2 ? Files(kV2Files) : Files(kV1Files);
  uint64_t limit = kNoLimit;
  for (;;) {
    for (const char* file : files) {
      const uint64_t value = read_limit(dir + "/" + file);
      if (value < limit) limit = value;
    }
    if (dir.size() <= top.size()) break;
    dir.resize(dir.rfind('/'));
    if (dir.size() < top.size()) break;
  }
  return limit;
}

}  // namespace

uint64_t cgroup_memory_limit(const CgroupSources& sources) {
  const uint64_t v2 = hierarchy_limit(sources, true);
  const uint64_t v1 = hierarchy_limit(sources, false);
  return v2 < v1 ? v2 : v1;
}

uint64_t cgroup_memory_limit() {
  return cgroup_memory_limit(
      {kernelsrc::read_text_file("/proc/self/cgroup"), kernelsrc::read_text_file("/proc/self/mountinfo"), ""});
}

}  // namespace spoor::record
