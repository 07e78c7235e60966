#include "module_paths.h"

#include <climits>
#include <cstdlib>

namespace spoor::analysis {

const std::string& ModulePaths::file_of(const std::string& path) {
  auto [it, inserted] = realpaths_.try_emplace(path);
  if (inserted && !path.empty() && path.front() == '/') {
    char resolved[PATH_MAX];
    if (::realpath((sysroot_ + path).c_str(), resolved) != nullptr) it->second = resolved;
  }
  return it->second;
}

std::string ModulePaths::canonical(std::string_view path_view, const std::vector<uint8_t>& build_id) {
  const std::string id(build_id.begin(), build_id.end());
  // A build ID names the contents: two spellings with one ID are one
  // module even when neither file is here to resolve.
  if (!id.empty())
    if (auto it = by_build_id_.find(id); it != by_build_id_.end()) return it->second;
  const std::string path(path_view);
  const std::string& file = file_of(path);
  std::string spelling = path;
  if (!file.empty()) spelling = by_file_.try_emplace(file, path).first->second;
  if (!id.empty()) by_build_id_.emplace(id, spelling);
  return spelling;
}

}  // namespace spoor::analysis
