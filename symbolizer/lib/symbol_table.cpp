#include "symbol_table.h"

#include <elf.h>

#include <algorithm>

namespace spoor::symbolizer {
namespace {

// Among aliases at one address, prefer a function to a label, then a global
// symbol, then a weak one, then a local one, as GNU addr2line does.
int rank_of(unsigned type, unsigned char binding) {
  const int function = type == STT_FUNC || type == STT_GNU_IFUNC ? 0 : 3;
  switch (binding) {
    case STB_GLOBAL: return function;
    case STB_WEAK: return function + 1;
    default: return function + 2;
  }
}

void sort_unique(std::vector<SymbolTable::Symbol>& symbols) {
  std::sort(symbols.begin(), symbols.end(), [](const SymbolTable::Symbol& a, const SymbolTable::Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.size > b.size;
  });
  symbols.erase(std::unique(symbols.begin(), symbols.end(),
                            [](const SymbolTable::Symbol& a, const SymbolTable::Symbol& b) {
                              return a.address == b.address;
                            }),
                symbols.end());
}

const SymbolTable::Symbol* at_or_below(const std::vector<SymbolTable::Symbol>& symbols, uint64_t address) {
  auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                             [](uint64_t a, const SymbolTable::Symbol& s) { return a < s.address; });
  if (it == symbols.begin()) return nullptr;
  const SymbolTable::Symbol& s = *(it - 1);
  if (address >= s.section_end) return nullptr;
  return &s;
}

}  // namespace

void SymbolTable::build(Dwfl_Module* module) {
  symbols_.clear();
  functions_.clear();
  const int count = dwfl_module_getsymtab(module);
  // BFD's attribution of symbols to STT_FILE symbols (elf_find_function):
  // a local symbol belongs to the file symbol before it; a global one only
  // while no file symbol has followed a non-file symbol.
  const char* file = nullptr;
  bool symbol_seen = false, file_after_symbol = false;
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(module, i, &sym, &address, &shndx, &elf, &bias);
    if (name == nullptr) continue;
    const unsigned type = GELF_ST_TYPE(sym.st_info);
    const unsigned char binding = GELF_ST_BIND(sym.st_info);
    if (type == STT_FILE) {
      file = name;
      if (symbol_seen) file_after_symbol = true;
      continue;
    }
    symbol_seen = true;
    if (name[0] == '\0' || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE) continue;
    if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) continue;
    // BFD skips hidden local sizeless labels (annobin's markers).
    if (type == STT_NOTYPE && sym.st_size == 0 && binding == STB_LOCAL &&
        GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
      continue;
    GElf_Shdr header;
    Elf_Scn* section = elf != nullptr ? elf_getscn(elf, shndx) : nullptr;
    if (section == nullptr || gelf_getshdr(section, &header) == nullptr ||
        (header.sh_flags & SHF_EXECINSTR) == 0)
      continue;
    const Symbol symbol{address,
                        sym.st_size,
                        header.sh_addr + bias + header.sh_size,
                        name,
                        binding == STB_LOCAL || !file_after_symbol ? file : nullptr,
                        type != STT_NOTYPE,
                        rank_of(type, binding)};
    symbols_.push_back(symbol);
    if (symbol.function) functions_.push_back(symbol);
  }
  sort_unique(symbols_);
  sort_unique(functions_);
}

const SymbolTable::Symbol* SymbolTable::find(uint64_t address) const {
  const Symbol* s = at_or_below(functions_, address);
  if (s != nullptr && s->size != 0 && address >= s->address + s->size) return nullptr;
  return s;
}

const SymbolTable::Symbol* SymbolTable::find_nearest(uint64_t address) const {
  return at_or_below(symbols_, address);
}

}  // namespace spoor::symbolizer
