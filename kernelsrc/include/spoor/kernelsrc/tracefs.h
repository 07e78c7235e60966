// Tracepoint IDs and field layouts, read from tracefs at run time (never
// compiled in: they differ between kernels and builds).
#ifndef SPOOR_KERNELSRC_TRACEFS_H
#define SPOOR_KERNELSRC_TRACEFS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "spoor/kernelsrc/attr_plan.h"

namespace spoor::kernelsrc {

struct TracepointField {
  uint32_t offset = 0;
  uint32_t size = 0;
  bool is_signed = false;
};

// A tracepoint's `format` file: its ID and the fields of its RAW data.
struct TracepointFormat {
  uint64_t id = 0;
  std::map<std::string, TracepointField> fields;  // by name ("prev_comm", not "char prev_comm[16]")

  const TracepointField* field(const std::string& name) const {
    auto it = fields.find(name);
    return it == fields.end() ? nullptr : &it->second;
  }
};

// Parses the text of a format file. Empty when it has no ID line.
std::optional<TracepointFormat> parse_tracepoint_format(const std::string& text);

// The tracefs of this machine: the mounted one (/sys/kernel/tracing or
// /sys/kernel/debug/tracing), or, when none is mounted and this process
// may, a private mount in a temporary directory, unmounted on destruction.
class Tracefs {
 public:
  Tracefs();
  ~Tracefs();
  Tracefs(const Tracefs&) = delete;
  Tracefs& operator=(const Tracefs&) = delete;

  // The format of group:name, or an error naming the path and errno (and
  // what would help: tracefs is root-only on most systems).
  TracepointId lookup(const std::string& group, const std::string& name);
  // The format lookup() read, if it succeeded.
  const TracepointFormat* format(const std::string& group, const std::string& name) const;

 private:
  std::string root_;          // ".../events" directory, empty when none
  std::string error_;         // why there is none
  std::string private_mount_; // our own mount point, to unmount
  std::map<std::string, TracepointFormat> formats_;
};

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_TRACEFS_H
