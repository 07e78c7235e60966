#include "symbol_table.h"

#include <elf.h>

#include <algorithm>

namespace spoor::symbolizer {
namespace {

// Among aliases at one address, prefer a global symbol, then a weak one,
// then a local one, as GNU addr2line does.
int binding_rank(unsigned char binding) {
  switch (binding) {
    case STB_GLOBAL: return 0;
    case STB_WEAK: return 1;
    default: return 2;
  }
}

}  // namespace

void SymbolTable::build(Dwfl_Module* module) {
  symbols_.clear();
  const int count = dwfl_module_getsymtab(module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(module, i, &sym, &address, &shndx, &elf, &bias);
    if (name == nullptr || name[0] == '\0' || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE) continue;
    const unsigned type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    uint64_t size = sym.st_size;
    // A sizeless symbol (_init, assembly) covers up to the next symbol, but
    // never past its section: the PLT after .init is not _init's.
    if (size == 0 && elf != nullptr) {
      GElf_Shdr header;
      Elf_Scn* section = elf_getscn(elf, shndx);
      if (section != nullptr && gelf_getshdr(section, &header) != nullptr &&
          header.sh_addr + bias + header.sh_size > address)
        size = header.sh_addr + bias + header.sh_size - address;
    }
    symbols_.push_back({address, size, name, binding_rank(GELF_ST_BIND(sym.st_info)), sym.st_size == 0});
  }
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    return a.rank < b.rank;
  });
  // Keep the preferred alias of each address only, so find() sees one.
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                             [](const Symbol& a, const Symbol& b) { return a.address == b.address; }),
                 symbols_.end());
}

const SymbolTable::Symbol* SymbolTable::find(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return nullptr;
  const Symbol& s = *(it - 1);
  if (s.size != 0 && address >= s.address + s.size) return nullptr;
  return &s;
}

}  // namespace spoor::symbolizer
