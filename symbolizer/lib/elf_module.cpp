#include "elf_module.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "debug_package.h"
#include "demangle.h"
#include "spoor/symbolizer/file_by_build_id.h"

namespace spoor::symbolizer {
namespace {

const char* string_attribute(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr) return nullptr;
  return dwarf_formstring(&attr);
}

// The DWARF name of a function, following DW_AT_abstract_origin and
// DW_AT_specification: its linkage (mangled) name when it has one, as GNU
// addr2line prefers, else its DW_AT_name.
const char* raw_function_name(Dwarf_Die* die, bool* mangled) {
  const char* name = string_attribute(die, DW_AT_linkage_name);
  if (name == nullptr) name = string_attribute(die, DW_AT_MIPS_linkage_name);
  *mangled = name != nullptr;
  if (name == nullptr) name = string_attribute(die, DW_AT_name);
  return name;
}

uint64_t unsigned_attribute(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(die, name, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) return 0;
  return value;
}

// BFD's mangle_style() == 0: languages whose DW_AT_name is the symbol name.
bool c_like_language(int language) {
  switch (language) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case DW_LANG_ObjC:
    case DW_LANG_Fortran77:
    case DW_LANG_Fortran90:
    case DW_LANG_Fortran95:
    case DW_LANG_Fortran03:
    case DW_LANG_Fortran08:
    case DW_LANG_Pascal83:
    case DW_LANG_Cobol74:
    case DW_LANG_Cobol85:
    case DW_LANG_Modula2:
    case DW_LANG_Mips_Assembler:
      return true;
    default:
      return false;
  }
}

// Where BFD's record of a function starts: its DW_AT_low_pc, or the start
// of its first DW_AT_ranges entry.
bool first_address(Dwarf_Die* die, uint64_t* address) {
  Dwarf_Addr low = 0;
  if (dwarf_lowpc(die, &low) == 0) {
    *address = low;
    return true;
  }
  // BFD skips empty ranges ([a, a) marks where inlined code was before
  // optimization moved it).
  Dwarf_Addr base = 0, start = 0, end = 0;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(die, offset, &base, &start, &end)) > 0) {
    if (end > start) {
      *address = start;
      return true;
    }
  }
  return false;
}

}  // namespace

ElfModule::ElfModule(const ModuleInfo& module, const std::string& file, const Options& options,
                     char** debuginfo_path, std::vector<ModuleProblem>& problems)
    : options_(options) {
  callbacks_.find_elf = dwfl_build_id_find_elf;
  callbacks_.find_debuginfo = dwfl_standard_find_debuginfo;
  callbacks_.section_address = dwfl_offline_section_address;
  callbacks_.debuginfo_path = debuginfo_path;
  std::string problem = open(module, file);
  std::string opened = file;
  if (!problem.empty() && module.image.empty() && !module.build_id.empty() && dwfl_ != nullptr) {
    // The recorded path is gone or holds another build: the recorded build
    // may still be found by its ID (a build-id tree, debuginfod).
    const FoundFile found = file_by_build_id(module.build_id, options);
    const std::string also_tried = found.path.empty() ? "" : open(module, found.path);
    if (!found.path.empty() && also_tried.empty()) {
      problem.clear();
      opened = found.path;
    } else if (found.path.empty()) {
      problem += "; no file with build ID " + build_id_hex(module.build_id.data(), module.build_id.size()) +
                 " under " + build_id_search_places(options) +
                 (debuginfod_configured()
                      ? " (restore the recorded file, point --sysroot at a copy, or pass --debug-dir)"
                      : " (restore the recorded file, point --sysroot at a copy, pass --debug-dir, or set "
                        "DEBUGINFOD_URLS)");
    } else {
      problem += "; the file found by its build ID in " + found.where + " failed too: " + also_tried;
    }
  }
  if (!problem.empty()) {
    problems.push_back({module.path, problem});
    module_ = nullptr;
    return;
  }

  symbols_.build(module_);
  Dwarf_Addr dwarf_bias = 0;
  dwarf_ = dwfl_module_getdwarf(module_, &dwarf_bias);
  dwarf_bias_ = dwarf_bias;
  if (dwarf_ == nullptr && module.image.empty())
    problems.push_back({module.path, missing_debug_info_message(opened == file ? file : module.path)});
}

std::string ElfModule::open(const ModuleInfo& module, const std::string& file) {
  // A Dwfl of its own for each try: a file reported and then refused
  // (another build) must not stay in it.
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
  module_ = nullptr;
  dwfl_ = dwfl_begin(&callbacks_);
  if (dwfl_ == nullptr) return std::string("cannot start libdwfl: ") + dwfl_errmsg(-1);
  dwfl_report_begin(dwfl_);
  if (!module.image.empty()) {
    image_ = module.image;
    module_ = dwfl_report_offline_memory(dwfl_, module.path.c_str(), module.path.c_str(),
                                         reinterpret_cast<char*>(image_.data()), image_.size());
  } else {
    module_ = dwfl_report_elf(dwfl_, module.path.c_str(), file.c_str(), -1, 0, true);
  }
  const std::string open_error = module_ == nullptr ? dwfl_errmsg(-1) : "";
  dwfl_report_end(dwfl_, nullptr, nullptr);
  if (module_ == nullptr) return "cannot read '" + file + "': " + open_error;

  Dwarf_Addr elf_bias = 0;
  if (dwfl_module_getelf(module_, &elf_bias) == nullptr) return "cannot read '" + file + "': " + dwfl_errmsg(-1);
  bias_ = elf_bias;

  if (!module.build_id.empty()) {
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    const int size = dwfl_module_build_id(module_, &bits, &vaddr);
    const bool same = size > 0 && static_cast<size_t>(size) == module.build_id.size() &&
                      std::memcmp(bits, module.build_id.data(), module.build_id.size()) == 0;
    if (!same)
      return "build ID of '" + file + "' is " +
             (size > 0 ? build_id_hex(bits, static_cast<size_t>(size)) : std::string("missing")) +
             ", the trace recorded " + build_id_hex(module.build_id.data(), module.build_id.size()) +
             ": the file changed since recording; its addresses are shown as module+offset";
  }
  return {};
}

ElfModule::~ElfModule() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

ElfModule::Unit* ElfModule::unit_at(uint64_t dwfl_address) {
  const uint64_t dwarf_address = dwfl_address - dwarf_bias_;
  Dwarf_Addr bias = 0;
  if (Dwarf_Die* found = dwfl_module_addrdie(module_, dwfl_address, &bias))
    if (Unit* unit = unit_covering(*found, dwarf_address)) return unit;
  // libdwfl answers with the nearest unit below an address its
  // .debug_aranges miss: the padding after a function, or a unit listed
  // in no arange at all (clang's by default; Go lists only its C objects,
  // so each Go function got the last C unit before it). Then the units'
  // own ranges say.
  Dwarf_Die line_unit;
  if (!unit_die_from_ranges(dwarf_address, &line_unit)) return nullptr;
  return unit_covering(line_unit, dwarf_address);
}

ElfModule::Unit* ElfModule::unit_covering(Dwarf_Die line_unit, uint64_t dwarf_address) {
  const uint64_t key = dwarf_dieoffset(&line_unit);
  auto it = units_.find(key);
  if (it == units_.end()) it = units_.emplace(key, make_unit(line_unit)).first;
  for (const auto& [unit_low, unit_high] : it->second.ranges)
    if (dwarf_address >= unit_low && dwarf_address < unit_high) return &it->second;
  return nullptr;
}

bool ElfModule::unit_die_from_ranges(uint64_t dwarf_address, Dwarf_Die* out) {
  if (!unit_ranges_built_) {
    unit_ranges_built_ = true;
    Dwarf_Addr bias = 0;
    for (Dwarf_Die* unit = nullptr; (unit = dwfl_module_nextcu(module_, unit, &bias)) != nullptr;) {
      Dwarf_Addr base = 0, low = 0, high = 0;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_ranges(unit, offset, &base, &low, &high)) > 0)
        if (high > low) unit_ranges_.push_back({low, high, *unit});
    }
    std::sort(unit_ranges_.begin(), unit_ranges_.end(),
              [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
  }
  auto it = std::upper_bound(unit_ranges_.begin(), unit_ranges_.end(), dwarf_address,
                             [](uint64_t a, const UnitRange& r) { return a < r.low; });
  if (it == unit_ranges_.begin() || dwarf_address >= (it - 1)->high) return false;
  *out = (it - 1)->unit;
  return true;
}

ElfModule::Unit ElfModule::make_unit(Dwarf_Die line_unit) {

  // Split DWARF: the skeleton unit in the ELF file owns the line table, its
  // split unit (in the .dwo file) owns the functions.
  Dwarf_Die code_unit = line_unit;
  uint8_t unit_type = 0;
  Dwarf_Die subdie;
  if (dwarf_cu_info(line_unit.cu, nullptr, &unit_type, nullptr, &subdie, nullptr, nullptr, nullptr) == 0 &&
      unit_type == DW_UT_skeleton && subdie.addr != nullptr)
    code_unit = subdie;

  Unit unit;
  unit.line_unit = line_unit;
  Dwarf_Addr base = 0, low = 0, high = 0;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(&line_unit, offset, &base, &low, &high)) > 0)
    if (high > low) unit.ranges.emplace_back(low, high);
  unit.names_are_linkage = c_like_language(dwarf_srclang(&line_unit));
  unit.index = std::make_unique<CuIndex>(code_unit, trees_);
  unit.lines = LineTable::read(dwarf_, &line_unit);
  // libdw's file list (which parses the whole line table too) only where
  // ours cannot name call files: a split unit's are in its .dwo.
  const bool split = code_unit.addr != line_unit.addr;
  size_t count = 0;
  if ((split || !unit.lines) && dwarf_getsrcfiles(&code_unit, &unit.files, &count) != 0) unit.files = nullptr;
  return unit;
}

const std::string& ElfModule::display_name(const char* raw, bool mangled) {
  auto it = names_.find(raw);
  if (it != names_.end()) return it->second;
  return names_.emplace(raw, mangled && options_.demangle ? demangle(raw) : std::string(raw)).first->second;
}

const std::string& ElfModule::function_name(const Unit& unit, Dwarf_Die* function, uint64_t dwfl_address,
                                            bool innermost) {
  static const std::string kUnknown;
  bool mangled = false;
  const char* raw = raw_function_name(function, &mangled);
  if (options_.gnu_addr2line_compatible) {
    // BFD names the innermost function by the ELF symbol around the address
    // when DWARF gives it no linkage name (in C++: inlined templates,
    // lambdas, main), the first time that function is met only: it then
    // marks it as named. When the symbol starts where the function does,
    // the function keeps the symbol's name for good.
    if (auto renamed = bfd_renamed_.find(function->addr); renamed != bfd_renamed_.end())
      return display_name(renamed->second, true);
    if (innermost && !mangled && !unit.names_are_linkage && bfd_named_.insert(function->addr).second) {
      if (const SymbolTable::Symbol* symbol = symbols_.find_nearest(dwfl_address)) {
        uint64_t first = 0;
        if (first_address(function, &first) && symbol->address == first + dwarf_bias_)
          bfd_renamed_.emplace(function->addr, symbol->name);
        return display_name(symbol->name, true);
      }
    }
  }
  if (raw == nullptr) return kUnknown;
  return display_name(raw, mangled);
}

void ElfModule::lookup(uint64_t file_address, Location& out) {
  out.frames.clear();
  out.resolved = false;
  if (module_ == nullptr) {
    out.frames.emplace_back();
    return;
  }
  const uint64_t dwfl_address = file_address + bias_;

  SourceFrame innermost;
  Unit* unit = dwarf_ != nullptr ? unit_at(dwfl_address) : nullptr;
  if (unit != nullptr) {
    const uint64_t dwarf_address = dwfl_address - dwarf_bias_;
    if (unit->lines) {
      LineTable::Row row;
      if (unit->lines->find(dwarf_address, &row)) {
        // BFD names a DWARF 5 sequence's rows before its first set_file by file 0.
        const bool bfd_file0 = options_.gnu_addr2line_compatible && row.bfd_file0;
        const char* file = unit->lines->file(bfd_file0 ? 0 : row.file);
        innermost.file = file != nullptr ? file : "";
        innermost.line = row.line;
        innermost.column = row.column;
        innermost.discriminator = row.discriminator;
        out.resolved = true;
      }
    } else if (Dwarf_Line* line = dwarf_getsrc_die(&unit->line_unit, dwarf_address)) {
      const char* file = dwarf_linesrc(line, nullptr, nullptr);
      int number = 0, column = 0;
      unsigned discriminator = 0;
      dwarf_lineno(line, &number);
      dwarf_linecol(line, &column);
      dwarf_linediscriminator(line, &discriminator);
      innermost.file = file != nullptr ? file : "";
      innermost.line = static_cast<uint32_t>(number);
      innermost.column = static_cast<uint32_t>(column);
      innermost.discriminator = discriminator;
      out.resolved = true;
    }
    if (unit->index->scopes(dwarf_address, chain_)) {
      out.resolved = true;
      innermost.function = function_name(*unit, &chain_.back(), dwfl_address, true);
      innermost.inlined = chain_.size() > 1;
      out.frames.push_back(std::move(innermost));
      if (!options_.inline_frames) return;
      // Each inlined scope's call site is a frame of the scope around it.
      for (size_t i = chain_.size() - 1; i > 0; --i) {
        SourceFrame caller;
        caller.function = function_name(*unit, &chain_[i - 1], dwfl_address, false);
        const uint64_t call_file = unsigned_attribute(&chain_[i], DW_AT_call_file);
        const char* name = unit->files != nullptr ? dwarf_filesrc(unit->files, call_file, nullptr, nullptr)
                           : unit->lines         ? unit->lines->file(call_file)
                                                 : nullptr;
        if (name != nullptr) caller.file = name;
        caller.line = static_cast<uint32_t>(unsigned_attribute(&chain_[i], DW_AT_call_line));
        caller.column = static_cast<uint32_t>(unsigned_attribute(&chain_[i], DW_AT_call_column));
        caller.inlined = i > 1;
        out.frames.push_back(std::move(caller));
      }
      return;
    }
  }
  // No DWARF function here: the ELF symbol names it, if any.
  const SymbolTable::Symbol* symbol = options_.gnu_addr2line_compatible ? symbols_.find_nearest(dwfl_address)
                                                                        : symbols_.find(dwfl_address);
  if (symbol != nullptr) {
    innermost.function = display_name(symbol->name, true);
    innermost.named_by_symbol = true;
    innermost.symbol_offset = dwfl_address - symbol->address;
    if (innermost.file.empty() && symbol->file != nullptr && options_.gnu_addr2line_compatible)
      innermost.file = symbol->file;
    out.resolved = true;
  } else if (!options_.gnu_addr2line_compatible) {
    out.code_start_known = code_start(dwfl_address, &out.code_start);
  }
  out.frames.push_back(std::move(innermost));
}

bool ElfModule::code_start(uint64_t dwfl_address, uint64_t* file_address) {
  Dwarf_Addr elf_bias = 0;
  Elf* elf = dwfl_module_getelf(module_, &elf_bias);
  if (!code_starts_) code_starts_.emplace(elf);
  // Only an address some FDE covers: the table says where entries begin,
  // and code without call frame information (hand-written assembly) after
  // a function is not part of it.
  Dwarf_Addr cfi_bias = 0;
  Dwarf_CFI* cfi = dwfl_module_eh_cfi(module_, &cfi_bias);
  Dwarf_Frame* frame = nullptr;
  if (cfi == nullptr || dwarf_cfi_addrframe(cfi, dwfl_address - cfi_bias, &frame) != 0) return false;
  std::free(frame);  // dwarf_cfi_addrframe's, malloc'd
  const std::optional<uint64_t> start = code_starts_->at_or_before(dwfl_address - elf_bias);
  if (!start) return false;
  *file_address = *start + elf_bias - bias_;
  return true;
}

}  // namespace spoor::symbolizer
