// A module's ELF code symbols sorted by address, for the names of addresses
// that DWARF does not cover (no debug info, PLT, assembly) and for GNU
// addr2line's naming rules.
//
// dwfl_module_addrinfo scans the whole symbol table on every call; this
// table is built once per module (O(n log n)) and answers in O(log n).
#ifndef SPOOR_SYMBOLIZER_SYMBOL_TABLE_H
#define SPOOR_SYMBOLIZER_SYMBOL_TABLE_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <cstdint>
#include <vector>

namespace spoor::symbolizer {

class SymbolTable {
 public:
  // Reads every code symbol of `module` (.symtab, else .dynsym, plus
  // .gnu_debugdata's). Addresses are Dwfl addresses of that module.
  void build(Dwfl_Module* module);

  struct Symbol {
    uint64_t address;
    uint64_t size;              // st_size, 0 for a sizeless symbol
    uint64_t section_end;       // one past the end of its section (Dwfl address)
    const char* name;           // as in the ELF file (mangled); owned by libdwfl's module
    const char* file;           // the STT_FILE symbol GNU addr2line attributes it to, or nullptr
    bool function;              // STT_FUNC or STT_GNU_IFUNC, not STT_NOTYPE
    int rank;                   // tie-break between aliases at one address: lower wins
  };

  // The function symbol that covers `address`, or nullptr: a sized one must
  // contain it; a sizeless one (_init, assembly) covers up to the next
  // symbol within its section.
  const Symbol* find(uint64_t address) const;

  // The symbol GNU addr2line (BFD) names `address` by: the nearest one at or
  // below it in the same section, whatever its size, function or not.
  const Symbol* find_nearest(uint64_t address) const;

 private:
  std::vector<Symbol> symbols_;    // code symbols, sorted by address, one per address
  std::vector<Symbol> functions_;  // STT_FUNC/IFUNC only, the same way
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_SYMBOL_TABLE_H
