// spoor::symbolizer: turns recorded program counters into functions, source
// lines and inline frames, with elfutils' libdwfl.
//
// Input is what a trace records about a module (path, build ID, load bias)
// and a runtime address; output is the chain of frames at that address,
// innermost (most deeply inlined) first. Results are memoized per (module,
// address), so symbolizing every stack of a trace costs one lookup per
// distinct address.
//
// Not thread-safe: libdw is not safe across one Dwfl, so use one Symbolizer
// per thread.
#ifndef SPOOR_SYMBOLIZER_SYMBOLIZER_H
#define SPOOR_SYMBOLIZER_SYMBOLIZER_H

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace spoor::symbolizer {

// One frame of a location. The outermost frame of a chain is the function
// that owns the address; the ones before it were inlined into it.
struct SourceFrame {
  std::string function;  // demangled when Options::demangle; "" when unknown
  std::string file;      // as DWARF names it (absolute when the CU dir is known); "" when unknown
  uint32_t line = 0;     // 0 when unknown
  uint32_t column = 0;   // 0 when unknown
  bool inlined = false;  // true for every frame but the outermost
  uint32_t discriminator = 0;  // DWARF line discriminator of the innermost frame; 0 when none
  // Named by an ELF symbol (no DWARF): the address's offset into that
  // symbol, what tells two calls in one function apart without lines.
  bool named_by_symbol = false;
  uint64_t symbol_offset = 0;
};

// Where a runtime address lands. `frames` is never empty: an address with
// no symbol gets one frame with an empty function, and printers show it as
// `module+0xoffset` (`module` and `module_address` below), so it never
// disappears from a report.
struct Location {
  std::vector<SourceFrame> frames;  // innermost first
  std::string module;               // path of the module, "" when the address is in none
  uint64_t module_address = 0;      // the address in the ELF file (runtime address - bias)
  bool resolved = false;            // a symbol (at least) was found
  // Unresolved only: where the call frame information entry (.eh_frame
  // FDE) that covers the address begins, as an ELF file address. Compilers give each function (and each cold part) its own,
  // so addresses of a stripped library group by the function they are in.
  bool code_start_known = false;
  uint64_t code_start = 0;
};

// A module as a trace describes it (Spoor.Process ModuleLoad).
struct ModuleInfo {
  std::string path;               // as mapped in the traced process
  std::vector<uint8_t> build_id;  // GNU build ID; empty when the ELF has none
  uint64_t bias = 0;              // runtime address - ELF virtual address
  uint64_t start = 0;             // first mapped byte (runtime)
  uint64_t size = 0;              // bytes mapped from start
  // An image of the module captured at record time (the vDSO); empty when
  // the file on disk is to be read.
  std::vector<uint8_t> image;
};

// Why a module's addresses resolve worse than they could.
struct ModuleProblem {
  std::string path;
  std::string message;  // says what is wrong and what would fix it
                        // ("no debug info; install libfoo1-dbgsym", "build ID differs
                        //  from the recorded one: the file changed since recording")
};

struct Options {
  std::vector<std::string> debug_dirs;  // searched before the defaults (--debug-dir)
  std::string sysroot;                  // prefix for module paths (--sysroot); "" for none
  bool demangle = true;
  // false: only the innermost frame, as addr2line without -i prints it
  // (the most deeply inlined function, at the line table's location).
  bool inline_frames = true;
  // Name frames as GNU addr2line does, for `spoor symbolize -e`: the
  // innermost frame of a C++ function that DWARF gives no linkage name
  // (inlined templates, lambdas, main) is named by the ELF symbol around the
  // address, and an address without DWARF by the nearest symbol below it in
  // its section, with the file from the STT_FILE symbol. Off, frames carry
  // DWARF's own names, which say more.
  bool gnu_addr2line_compatible = false;
  // Where JIT runtimes leave their symbol maps, perf's convention:
  // perf-PID.map (node --perf-basic-prof, java -XX:+DumpPerfMapAtExit).
  // spoor::analysis names addresses in no module from them; "" reads none.
  std::string perf_map_dir = "/tmp";
};

using ModuleId = uint32_t;

class Symbolizer {
 public:
  explicit Symbolizer(Options options = {});
  Symbolizer(Symbolizer&&) noexcept;
  Symbolizer& operator=(Symbolizer&&) noexcept;
  ~Symbolizer();

  // Describes a module; cheap (files are opened on first lookup). Modules of
  // different processes may overlap in address: each gets its own id.
  ModuleId add_module(const ModuleInfo& module);

  // The frames at `address` (runtime) in `module`. For a caller frame pass
  // the return address minus 1. The reference stays valid until the
  // Symbolizer is destroyed.
  //
  // Cost: a repeated address is one hash lookup. A new one is a binary
  // search over the unit's functions and line rows plus a walk down one
  // function's flattened inline tree (~25 us per address on the bench's
  // 65 MB -O2 -g program, loading included; bench/RESULTS.md). The first
  // address in a file opens it and sorts its symbols; the first in a unit
  // indexes the unit's functions and reads its line table; the first in a
  // function flattens its inline tree.
  const Location& symbolize(ModuleId module, uint64_t address);

  // The same for an ELF file given directly, as addr2line -e does: addresses
  // are file addresses (bias 0).
  const Location& symbolize_file(const std::string& elf_path, uint64_t address);

  // The same into `out`, without keeping the result: for one pass over
  // addresses that rarely repeat (spoor symbolize -e), where the memo would
  // only hold memory (the frames' strings are most of it). The file stays
  // open and its problems are reported as above.
  void symbolize_file_unmemoized(const std::string& elf_path, uint64_t address, Location& out);

  // Modules that could not be read, lack debug info or changed since
  // recording, once each, in the order they were met.
  const std::vector<ModuleProblem>& problems() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_SYMBOLIZER_H
