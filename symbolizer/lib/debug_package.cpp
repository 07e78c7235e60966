#include "debug_package.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spoor/symbolizer/file_by_build_id.h"

namespace spoor::symbolizer {
namespace {

// dpkg's file lists (/var/lib/dpkg/info/PACKAGE[:ARCH].list, a path a
// line), read once into the path -> package index `dpkg -S` builds anew
// at each call. Running `dpkg -S` took ~50 ms a query, and up to four
// queries a module: 4 s of the 4.6 s a report of a 41-process python
// recording took. Read in ~0.1 s, and only when a module lacks debug info.
// Paths under the trees that hold no program or library (/usr/share,
// /usr/include, /etc, /var, /usr/src: 100,000 of 170,000 here) are not
// kept.
class DpkgOwners {
  // One read into a string of the file's size.
  static std::string read_whole(const std::filesystem::path& path) {
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      std::error_code ec;
      text.resize(static_cast<size_t>(std::filesystem::file_size(path, ec)));
      text.resize(ec ? 0 : std::fread(text.data(), 1, text.size(), f));
      std::fclose(f);
    }
    return text;
  }

  static bool may_hold_a_module(std::string_view path) {
    for (const std::string_view tree : {"/usr/share/", "/usr/include/", "/etc/", "/var/", "/usr/src/"})
      if (path.starts_with(tree)) return false;
    return !path.empty();
  }

 public:
  explicit DpkgOwners(const std::filesystem::path& dir) {
    struct Kept {
      size_t at, size;
      uint32_t package;
    };
    std::vector<Kept> kept;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.ends_with(".list")) continue;
      packages_.push_back(name.substr(0, std::min(name.find(':'), name.size() - 5)));
      const std::string list = read_whole(entry.path());
      std::string_view text = list;
      while (!text.empty()) {
        const size_t newline = text.find('\n');
        const std::string_view line = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        if (!may_hold_a_module(line)) continue;
        kept.push_back({paths_.size(), line.size(), static_cast<uint32_t>(packages_.size() - 1)});
        paths_.append(line);
      }
    }
    // Indexed once paths_ stops growing (the views point into it).
    owner_.reserve(kept.size());
    for (const Kept& k : kept)
      owner_.try_emplace(std::string_view(paths_).substr(k.at, k.size), k.package);  // two packages: the first
  }

  std::string find(const std::string& path) const {
    const auto it = owner_.find(path);
    return it == owner_.end() ? std::string() : packages_[it->second];
  }

 private:
  std::vector<std::string> packages_;
  std::string paths_;  // every kept path, back to back
  std::unordered_map<std::string_view, uint32_t> owner_;
};

const DpkgOwners& dpkg_owners() {
  static const DpkgOwners owners("/var/lib/dpkg/info");
  return owners;
}

}  // namespace

std::string owning_package(const std::string& path) {
  // The ELF file's real path first: a symlink such as /usr/bin/objdump may
  // belong to another package than the file it points to, whose -dbgsym is
  // the one to install. Then, with merged /usr, the name its package ships
  // it under (/lib/... or /usr/lib/...).
  const DpkgOwners& owners = dpkg_owners();
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  std::string package = ec ? std::string() : owners.find(real.string());
  if (package.empty()) package = owners.find(path);
  if (package.empty() && path.rfind("/usr/", 0) == 0) package = owners.find(path.substr(4));
  if (package.empty() && path.rfind("/lib", 0) == 0) package = owners.find("/usr" + path);
  return package;
}

std::string missing_debug_info_message(const std::string& path) {
  // libdwfl asks debuginfod for the debug file itself when DEBUGINFOD_URLS
  // is set, so here it either had none or is not set up.
  const bool asked_debuginfod = debuginfod_configured();
  const std::string none = asked_debuginfod ? "no debug info (DWARF), nor from debuginfod; " : "no debug info (DWARF); ";
  const std::string package = owning_package(path);
  if (package.empty())
    return none + "rebuild it with -g, or pass --debug-dir with a directory holding its .build-id/xx/rest.debug or "
                  ".gnu_debuglink file";
  return none + "install " + package + "-dbgsym (from the Debian debug archive), " +
         (asked_debuginfod ? "" : "set DEBUGINFOD_URLS=https://debuginfod.debian.net, ") + "or pass --debug-dir";
}

}  // namespace spoor::symbolizer
