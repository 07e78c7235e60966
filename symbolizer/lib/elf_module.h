// One ELF file (or captured image) opened for symbolization: its own Dwfl
// with the file reported at its link-time addresses, its symbol table, and
// the per-unit indexes built as addresses reach them.
//
// Each file gets a Dwfl of its own so that modules of different processes,
// which overlap in runtime address, never collide inside libdwfl; callers
// pass file addresses (runtime address - bias).
#ifndef SPOOR_SYMBOLIZER_ELF_MODULE_H
#define SPOOR_SYMBOLIZER_ELF_MODULE_H

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "code_starts.h"
#include "cu_index.h"
#include "line_table.h"
#include "spoor/symbolizer/symbolizer.h"
#include "symbol_table.h"

namespace spoor::symbolizer {

class ElfModule {
 public:
  // Opens `file` (the path after --sysroot) or, when `module.image` is not
  // empty, that image. When `file` is unreadable or another build than the
  // recorded one, the recorded build is looked for by its build ID
  // (file_by_build_id.h). `debuginfo_path` is libdwfl's search path
  // (":"-separated) and must outlive this object. What keeps addresses from
  // resolving fully (unreadable file, changed build ID, no DWARF) is
  // appended to `problems`, named by module.path.
  ElfModule(const ModuleInfo& module, const std::string& file, const Options& options,
            char** debuginfo_path, std::vector<ModuleProblem>& problems);
  ~ElfModule();
  ElfModule(const ElfModule&) = delete;
  ElfModule& operator=(const ElfModule&) = delete;

  // Fills `out.frames` and `out.resolved` for `file_address` (an address
  // in the ELF file's own layout). Never leaves frames empty.
  void lookup(uint64_t file_address, Location& out);

 private:
  struct Unit {
    Dwarf_Die line_unit;  // the unit whose line table covers the code (skeleton for split DWARF)
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // DWARF addresses the unit covers
    bool names_are_linkage = false;  // a C-like language: BFD takes DW_AT_name as the linkage name
    std::unique_ptr<CuIndex> index;
    std::optional<LineTable> lines;  // nullopt when unreadable: libdw's are used
    Dwarf_Files* files = nullptr;    // libdw's, for DW_AT_call_file of split units (or without `lines`)
  };
  // Reports `file` (or module.image) in a new Dwfl and checks its build
  // ID against the recorded one: "" when module_ is ready, else why not.
  std::string open(const ModuleInfo& module, const std::string& file);
  Unit* unit_at(uint64_t dwfl_address);
  // The start of the FDE covering the address (Location::code_start).
  bool code_start(uint64_t dwfl_address, uint64_t* file_address);
  // The unit made from `line_unit` (made once), if its ranges hold the address.
  Unit* unit_covering(Dwarf_Die line_unit, uint64_t dwarf_address);
  bool unit_die_from_ranges(uint64_t dwarf_address, Dwarf_Die* out);
  Unit make_unit(Dwarf_Die line_unit);
  const std::string& function_name(const Unit& unit, Dwarf_Die* function, uint64_t dwfl_address,
                                   bool innermost);
  const std::string& display_name(const char* raw, bool mangled);

  Options options_;
  std::vector<uint8_t> image_;  // libdwfl reads the image in place
  Dwfl_Callbacks callbacks_{};
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;  // nullptr when the file could not be used
  uint64_t bias_ = 0;              // Dwfl address - file address
  Dwarf* dwarf_ = nullptr;         // nullptr without debug info
  uint64_t dwarf_bias_ = 0;        // Dwfl address - DWARF address
  SymbolTable symbols_;
  std::unordered_map<uint64_t, Unit> units_;  // by the unit DIE's offset
  CuIndex::TreeCache trees_;
  // Every unit's ranges, sorted: built on the first address libdwfl's
  // .debug_aranges lookup misses (clang emits no .debug_aranges by default,
  // and libdw 0.188 does not fall back to the units' own ranges).
  struct UnitRange {
    uint64_t low, high;
    Dwarf_Die unit;
  };
  std::vector<UnitRange> unit_ranges_;
  bool unit_ranges_built_ = false;
  std::optional<CodeStarts> code_starts_;  // read at the first address no symbol names
  std::unordered_map<const char*, std::string> names_;  // raw DWARF/ELF string -> shown name
  std::vector<Dwarf_Die> chain_;                        // scratch, reused across lookups
  // GNU addr2line's naming state (Options::gnu_addr2line_compatible), by DIE.
  std::unordered_set<const void*> bfd_named_;
  std::unordered_map<const void*, const char*> bfd_renamed_;
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_ELF_MODULE_H
