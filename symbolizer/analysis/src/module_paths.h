// One spelling per module file. On systems where /lib is a symlink to
// /usr/lib (Debian, Fedora, Arch: the merged /usr), the same library shows
// up as /lib/x86_64-linux-gnu/libc.so.6 in one process (the loader's path,
// from ld.so.cache) and /usr/lib/x86_64-linux-gnu/libc.so.6 in another, or
// in the kernel's mmap records (which resolve symlinks). Tables keyed by
// module path would show it twice. The loader gives every module the
// first spelling seen of its file: the same build ID, or lacking one, the
// same realpath() (computed here, at report time, when the file exists).
#ifndef SPOOR_ANALYSIS_MODULE_PATHS_H
#define SPOOR_ANALYSIS_MODULE_PATHS_H

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace spoor::analysis {

class ModulePaths {
 public:
  // `sysroot`: where the recorded paths are found (LoadOptions::sysroot),
  // "" for this machine's root.
  explicit ModulePaths(std::string sysroot = {}) : sysroot_(std::move(sysroot)) {}

  // The spelling to use for the module at `path` with `build_id` (may be
  // empty): the first one given for the same build ID or the same file,
  // else `path` itself, which becomes that file's spelling.
  // Cost: a few hash lookups; a path not seen before also one realpath().
  std::string canonical(std::string_view path, const std::vector<uint8_t>& build_id);

 private:
  const std::string& file_of(const std::string& path);  // realpath, or "" when it does not resolve

  std::string sysroot_;
  std::unordered_map<std::string, std::string> by_build_id_;  // raw build ID -> the canonical spelling
  std::unordered_map<std::string, std::string> by_file_;      // realpath -> the canonical spelling
  std::unordered_map<std::string, std::string> realpaths_;    // a spelling -> its realpath ("" none)
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_MODULE_PATHS_H
