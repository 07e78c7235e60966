#include "cu_index.h"

#include <dwarf.h>

#include <algorithm>

namespace spoor::symbolizer {
namespace {

// Tags whose subtree may hold a function definition. Skipping the others
// (variables, parameters, base types, ...) keeps the one walk per unit short.
bool may_hold_functions(int tag) {
  switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_subprogram:
    case DW_TAG_lexical_block:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
      return true;
    default:
      return false;
  }
}

// Appends the inlined subroutines that contain `address` below `parent`,
// outermost first, walking through lexical blocks.
void add_inlined(Dwarf_Die* parent, uint64_t address, std::vector<Dwarf_Die>& chain) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block && tag != DW_TAG_try_block &&
        tag != DW_TAG_catch_block)
      continue;
    if (dwarf_haspc(&child, address) != 1) continue;
    if (tag == DW_TAG_inlined_subroutine) chain.push_back(child);
    // Scopes nest, so no sibling contains the address too: go down only.
    Dwarf_Die inner = child;
    add_inlined(&inner, address, chain);
    return;
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

CuIndex::CuIndex(Dwarf_Die unit) {
  add_functions(&unit);
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.low < b.low; });
}

void CuIndex::add_functions(Dwarf_Die* parent) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
      Dwarf_Addr base = 0, low = 0, high = 0;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_ranges(&child, offset, &base, &low, &high)) > 0)
        if (high > low) ranges_.push_back({low, high, child});
    }
    if (may_hold_functions(tag) && dwarf_haschildren(&child)) add_functions(&child);
  } while (dwarf_siblingof(&child, &child) == 0);
}

bool CuIndex::scopes(uint64_t address, std::vector<Dwarf_Die>& chain) const {
  chain.clear();
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](uint64_t a, const Range& r) { return a < r.low; });
  // Function ranges rarely overlap (a nested function's code sits inside its
  // parent's range only with GNU C nested functions); the nearest range
  // below that contains the address is the innermost. Look back a little
  // for an enclosing one when the nearest does not contain it.
  const Range* best = nullptr;
  for (int looked = 0; it != ranges_.begin() && looked < 16; ++looked) {
    --it;
    if (address < it->high) {
      best = &*it;
      break;
    }
  }
  if (best == nullptr) return false;
  chain.push_back(best->function);
  Dwarf_Die function = best->function;
  add_inlined(&function, address, chain);
  return true;
}

}  // namespace spoor::symbolizer
