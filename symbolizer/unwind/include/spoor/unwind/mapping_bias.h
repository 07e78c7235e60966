// A module as the kernel's mmap records describe it (Spoor.Kernel Mmap:
// start, length, file offset, path) turned into what the symbolizer and
// the unwinder take (symbolizer::ModuleInfo: bias, range, build ID), for
// traces without the preload's ModuleLoad events (spoor record --no-preload).
#ifndef SPOOR_UNWIND_MAPPING_BIAS_H
#define SPOOR_UNWIND_MAPPING_BIAS_H

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "spoor/symbolizer/symbolizer.h"

namespace spoor::unwind {

struct Mapping {
  std::string path;
  uint64_t start = 0;
  uint64_t length = 0;
  uint64_t pgoff = 0;
  std::vector<uint8_t> build_id;  // as recorded; empty when the record had none
};

// The load bias is start + (p_offset - pgoff) - p_vaddr of the PT_LOAD the
// mapped page belongs to (p_vaddr and p_offset differ for lld's and non-PIE
// layouts). Files are read once each; a file that cannot be read, or has
// no PT_LOAD at that offset, gives nullopt.
class MappingBias {
 public:
  explicit MappingBias(std::string sysroot = {}) : sysroot_(std::move(sysroot)) {}
  std::optional<symbolizer::ModuleInfo> module(const Mapping& mapping);

 private:
  struct Segment {
    uint64_t offset, vaddr, filesz;
  };
  struct File {
    bool readable = false;
    std::vector<Segment> loads;
    std::vector<uint8_t> build_id;
  };
  const File& file(const std::string& path);

  std::string sysroot_;
  std::unordered_map<std::string, File> files_;
};

}  // namespace spoor::unwind

#endif  // SPOOR_UNWIND_MAPPING_BIAS_H
