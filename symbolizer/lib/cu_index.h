// One compile unit's functions sorted by address, and the chain of inlined
// scopes at an address.
//
// dwarf_getscopes walks the whole unit on every call, and dwarf_haspc
// decodes a DIE's ranges again on every call. This index walks the unit's
// top levels once (O(DIEs outside functions)); the first address in a
// function flattens that function's inline tree once (its DIEs and ranges,
// in preorder); after that an address costs a binary search over the
// unit's functions plus a walk down the flattened tree that visits only the
// siblings along its chain.
#ifndef SPOOR_SYMBOLIZER_CU_INDEX_H
#define SPOOR_SYMBOLIZER_CU_INDEX_H

#include <elfutils/libdw.h>

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spoor::symbolizer {

class CuIndex {
 public:
  // Inline trees kept across units: the most recent kCapacity, so memory
  // stays bounded however many functions a run meets (addresses near each
  // other in time tend to share a function: sorted input, one stack).
  class TreeCache;

  // Indexes the functions (DW_TAG_subprogram with code) under `unit`: the
  // unit DIE that holds the code's DIEs (for split DWARF, the split unit).
  CuIndex(Dwarf_Die unit, TreeCache& trees);

  // Fills `chain` with the scopes that contain `address` (a DWARF address),
  // outermost first: the function, then each DW_TAG_inlined_subroutine
  // down to the innermost. Lexical blocks are walked through, not listed.
  // Returns false (and an empty chain) when no function contains it.
  bool scopes(uint64_t address, std::vector<Dwarf_Die>& chain);

 private:
  struct Range {
    uint64_t low;   // first address
    uint64_t high;  // one past the last
    Dwarf_Die function;
  };
  // A function's inlined subroutines in preorder; node i's descendants are
  // [i + 1, subtree_end).
  struct InlineTree {
    struct Node {
      void* die;  // Dwarf_Die::addr: the rest of the DIE is the function's (same unit)
      uint32_t first_range;
      uint32_t end_range;
      uint32_t subtree_end;
    };
    Dwarf_Die function;
    std::vector<Node> nodes;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
  };
  void add_functions(Dwarf_Die* parent);
  static void add_inlined(Dwarf_Die* parent, InlineTree& tree);
  const InlineTree& tree_of(const Dwarf_Die& function);

  std::vector<Range> ranges_;  // sorted by low
  TreeCache& trees_;

 public:
  class TreeCache {
   public:
    static constexpr size_t kCapacity = 1024;
    const InlineTree* find(const void* function) const;
    const InlineTree& insert(const void* function, InlineTree tree);

   private:
    std::unordered_map<const void*, InlineTree> trees_;
    std::vector<const void*> order_;  // a ring of keys, oldest at next_
    size_t next_ = 0;
  };
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_CU_INDEX_H
