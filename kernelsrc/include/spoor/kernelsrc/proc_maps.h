// The mappings a process already has (/proc/PID/maps), for the modules
// mapped before the perf events were enabled, with the build IDs of their
// files (libdw's dwelf_elf_gnu_build_id, as the symbolizer reads them).
#ifndef SPOOR_KERNELSRC_PROC_MAPS_H
#define SPOOR_KERNELSRC_PROC_MAPS_H

#include <cstdint>
#include <string>
#include <vector>

namespace spoor::kernelsrc {

struct Mapping {
  uint64_t start = 0, length = 0, pgoff = 0;
  uint32_t prot = 0;   // PROT_READ | PROT_WRITE | PROT_EXEC
  uint32_t flags = 0;  // MAP_PRIVATE or MAP_SHARED
  std::string path;    // file, or "[vdso]", "[heap]", ...; empty for anonymous memory
};

// Parses the text of a maps file (one line per mapping). Lines it cannot
// read are skipped.
std::vector<Mapping> parse_proc_maps(const std::string& text);

// The executable file mappings of `pid` now (empty if it is gone).
std::vector<Mapping> executable_mappings(int pid);

// The GNU build ID of the ELF file at `path`, or empty.
std::vector<uint8_t> file_build_id(const std::string& path);

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_PROC_MAPS_H
