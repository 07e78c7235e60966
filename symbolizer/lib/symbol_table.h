// A module's ELF function symbols sorted by address, for the names of
// addresses that DWARF does not cover (no debug info, PLT, assembly).
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
  // Reads every function symbol of `module` (.symtab, else .dynsym, plus
  // .gnu_debugdata's). Addresses are Dwfl addresses of that module.
  void build(Dwfl_Module* module);

  struct Symbol {
    uint64_t address;
    uint64_t size;
    const char* name;  // as in the ELF file (mangled); owned by libdwfl's module
    int rank;          // tie-break between aliases at one address: lower wins
    bool sizeless;     // st_size was 0; `size` is then the rest of its section, or 0 if unknown
  };

  // The function symbol covering `address`, or nullptr. A sized symbol must
  // contain the address; a sizeless one covers up to the next symbol.
  const Symbol* find(uint64_t address) const;

 private:
  std::vector<Symbol> symbols_;
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_SYMBOL_TABLE_H
