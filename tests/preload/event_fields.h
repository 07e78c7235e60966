// Typed access to a decoded event's fields by name, for the tests that read
// what `spoor record` wrote; and the stacks' innermost frames and the
// modules' ranges, which those tests use to say where a call came from.
#ifndef SPOOR_TESTS_PRELOAD_EVENT_FIELDS_H
#define SPOOR_TESTS_PRELOAD_EVENT_FIELDS_H

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "spoor/reader/event_reader.h"

namespace spoor::test::fields {

// Each throws std::bad_variant_access (a test failure, not a crash) when
// the field holds another type, and dereferences an absent field: ask only
// for fields the event is known to have.
inline int64_t i64(const reader::Event& e, const char* name) { return std::get<int64_t>(*e.field(name)); }
inline uint64_t u64(const reader::Event& e, const char* name) { return std::get<uint64_t>(*e.field(name)); }
inline uint64_t ptr(const reader::Event& e, const char* name) {
  return std::get<reader::Pointer>(*e.field(name)).address;
}
inline std::string str(const reader::Event& e, const char* name) {
  return std::string(std::get<std::string_view>(*e.field(name)));
}
inline std::vector<uint8_t> blob(const reader::Event& e, const char* name) {
  const auto bytes = std::get<reader::Blob>(*e.field(name)).bytes;
  return {bytes.begin(), bytes.end()};
}

// Where the program's calls came from: each Stack's innermost frame by its
// ID, and each loaded module's [start, end) by its path.
struct CallSites {
  std::map<uint64_t, uint64_t> innermost_frame;
  std::map<std::string, std::pair<uint64_t, uint64_t>> modules;

  // Takes what it needs from a Stack or ModuleLoad event; ignores others.
  void note(const reader::Event& e) {
    const std::string& name = e.descriptor->name;
    if (name == "Stack") {
      const auto frames = std::get<reader::Blob>(*e.field("frames")).bytes;
      uint64_t ip = 0;
      if (frames.size() >= 8) std::memcpy(&ip, frames.data(), 8);
      innermost_frame[u64(e, "id")] = ip;
    } else if (name == "ModuleLoad") {
      const uint64_t start = ptr(e, "start");
      modules[str(e, "path")] = {start, start + u64(e, "size")};
    }
  }
};

// The last part of a path: the tests name the files their programs make
// by it ("f.txt"), wherever the test's temporary directory is.
inline std::string base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace spoor::test::fields

#endif  // SPOOR_TESTS_PRELOAD_EVENT_FIELDS_H
