#include "spoor/symbolizer/file_by_build_id.h"

#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace spoor::symbolizer {
namespace {

// The directories whose .build-id trees are searched, in order.
std::vector<std::pair<std::string, std::string>> build_id_trees(const Options& options) {
  std::vector<std::pair<std::string, std::string>> trees;
  for (const std::string& dir : options.debug_dirs) trees.emplace_back(dir, "--debug-dir " + dir);
  trees.emplace_back(options.sysroot + "/usr/lib/debug", options.sysroot + "/usr/lib/debug");
  return trees;
}

// One debuginfod query; the cached file's path, or "" (not found, no
// server, or the server unreachable: libdebuginfod returns -errno).
std::string fetch(int (*find)(debuginfod_client*, const unsigned char*, int, char**),
                  debuginfod_client* client, const std::vector<uint8_t>& build_id) {
  char* path = nullptr;
  const int fd = find(client, build_id.data(), static_cast<int>(build_id.size()), &path);
  if (fd < 0) return {};
  close(fd);
  std::string out = path != nullptr ? path : "";
  std::free(path);
  return out;
}

}  // namespace

std::string build_id_hex(const uint8_t* bytes, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

bool debuginfod_configured() {
  const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
  return urls != nullptr && urls[0] != '\0';
}

FoundFile file_by_build_id(const std::vector<uint8_t>& build_id, const Options& options, FileUse use) {
  // Build-id trees split the ID after its first byte; a shorter ID than
  // two bytes names no such file.
  if (build_id.size() < 2) return {};
  const std::string id = build_id_hex(build_id.data(), build_id.size());
  const std::string relative = ".build-id/" + id.substr(0, 2) + "/" + id.substr(2);
  for (const auto& [dir, where] : build_id_trees(options)) {
    std::error_code ec;
    for (const bool debug_only : {false, true}) {
      if (debug_only && use == FileUse::unwinding) continue;
      const std::filesystem::path candidate = dir + "/" + relative + (debug_only ? ".debug" : "");
      if (std::filesystem::is_regular_file(candidate, ec)) return {candidate.string(), where, debug_only};
    }
  }
  if (!debuginfod_configured()) return {};
  // One client per query: a report asks for few files this way (only those
  // whose recorded path failed), and libdebuginfod keeps its cache on disk.
  debuginfod_client* client = debuginfod_begin();
  if (client == nullptr) return {};
  FoundFile found;
  found.where = "debuginfod";
  found.path = fetch(debuginfod_find_executable, client, build_id);
  if (found.path.empty() && use == FileUse::symbols) {
    found.path = fetch(debuginfod_find_debuginfo, client, build_id);
    found.debug_only = true;
  }
  debuginfod_end(client);
  if (found.path.empty()) return {};
  return found;
}

std::string build_id_search_places(const Options& options) {
  std::string places;
  for (const auto& [dir, where] : build_id_trees(options)) {
    if (!places.empty()) places += ", ";
    places += dir + "/.build-id";
  }
  places += debuginfod_configured() ? std::string(", nor from debuginfod (") + std::getenv(DEBUGINFOD_URLS_ENV_VAR) + ")"
                                    : ", nor from debuginfod (DEBUGINFOD_URLS is not set)";
  return places;
}

}  // namespace spoor::symbolizer
