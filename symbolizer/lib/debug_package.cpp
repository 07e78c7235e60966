#include "debug_package.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace spoor::symbolizer {
namespace {

// `dpkg -S` output: "pkg[:arch][, pkg2...]: /path". "" when none.
std::string query_dpkg(const std::string& path) {
  // Paths with quotes are not worth a shell escape: no package owns them.
  if (path.find_first_of("'\n") != std::string::npos) return {};
  const std::string command = "dpkg -S '" + path + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  std::array<char, 512> buf;
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) {
    out += buf.data();
    if (out.find('\n') != std::string::npos) break;  // the first owner is enough
  }
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) {
  }
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  const size_t end = out.find_first_of(":,");
  if (end == std::string::npos || end == 0) return {};
  return out.substr(0, end);
}

}  // namespace

std::string owning_package(const std::string& path) {
  std::string package = query_dpkg(path);
  if (!package.empty()) return package;
  // With merged /usr, dpkg knows a file under the name its package ships
  // (/lib/... or /usr/lib/...), which may differ from the mapped path.
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (!ec && real.string() != path) package = query_dpkg(real.string());
  if (package.empty() && path.rfind("/usr/", 0) == 0) package = query_dpkg(path.substr(4));
  if (package.empty() && path.rfind("/lib", 0) == 0) package = query_dpkg("/usr" + path);
  return package;
}

std::string missing_debug_info_message(const std::string& path) {
  const std::string package = owning_package(path);
  if (!package.empty())
    return "no debug info (DWARF); install " + package +
           "-dbgsym (from the Debian debug archive), or pass --debug-dir";
  return "no debug info (DWARF); rebuild it with -g, or pass --debug-dir with a directory holding "
         "its .build-id/xx/rest.debug or .gnu_debuglink file";
}

}  // namespace spoor::symbolizer
