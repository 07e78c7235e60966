// One compile unit's functions sorted by address, and the chain of inlined
// scopes at an address.
//
// dwarf_getscopes walks the whole unit on every call. This index walks it
// once (O(DIEs)), then an address costs a binary search over the unit's
// function ranges plus a walk of the one function's subtree that contains
// it.
#ifndef SPOOR_SYMBOLIZER_CU_INDEX_H
#define SPOOR_SYMBOLIZER_CU_INDEX_H

#include <elfutils/libdw.h>

#include <cstdint>
#include <vector>

namespace spoor::symbolizer {

class CuIndex {
 public:
  // Indexes the functions (DW_TAG_subprogram with code) under `unit`: the
  // unit DIE that holds the code's DIEs (for split DWARF, the split unit).
  explicit CuIndex(Dwarf_Die unit);

  // Fills `chain` with the scopes that contain `address` (a DWARF address),
  // outermost first: the function, then each DW_TAG_inlined_subroutine
  // down to the innermost. Lexical blocks are walked through, not listed.
  // Returns false (and an empty chain) when no function contains it.
  bool scopes(uint64_t address, std::vector<Dwarf_Die>& chain) const;

 private:
  struct Range {
    uint64_t low;   // first address
    uint64_t high;  // one past the last
    Dwarf_Die function;
  };
  void add_functions(Dwarf_Die* parent);

  std::vector<Range> ranges_;  // sorted by low
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_CU_INDEX_H
