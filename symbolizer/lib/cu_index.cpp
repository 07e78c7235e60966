#include "cu_index.h"

#include <dwarf.h>

#include <algorithm>

namespace spoor::symbolizer {
namespace {

// Tags whose subtree may hold a function definition. GCC and clang put
// concrete definitions (methods of local classes and lambdas included) at
// unit or namespace level; skipping the insides of functions and types
// keeps the one walk per unit short.
bool may_hold_functions(int tag) {
  switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_module:
      return true;
    default:
      return false;
  }
}

template <typename Visit>
void for_each_range(Dwarf_Die* die, Visit visit) {
  Dwarf_Addr base = 0, low = 0, high = 0;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0)
    if (high > low) visit(low, high);
}

}  // namespace

CuIndex::CuIndex(Dwarf_Die unit, TreeCache& trees) : trees_(trees) {
  add_functions(&unit);
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.low < b.low; });
}

void CuIndex::add_functions(Dwarf_Die* parent) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point)
      for_each_range(&child, [&](uint64_t low, uint64_t high) { ranges_.push_back({low, high, child}); });
    else if (may_hold_functions(tag) && dwarf_haschildren(&child))
      add_functions(&child);
  } while (dwarf_siblingof(&child, &child) == 0);
}

void CuIndex::add_inlined(Dwarf_Die* parent, InlineTree& tree) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_inlined_subroutine) {
      const size_t index = tree.nodes.size();
      tree.nodes.push_back({child.addr, static_cast<uint32_t>(tree.ranges.size()), 0, 0});
      for_each_range(&child, [&](uint64_t low, uint64_t high) { tree.ranges.emplace_back(low, high); });
      tree.nodes[index].end_range = static_cast<uint32_t>(tree.ranges.size());
      if (dwarf_haschildren(&child)) add_inlined(&child, tree);
      tree.nodes[index].subtree_end = static_cast<uint32_t>(tree.nodes.size());
    } else if ((tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
               dwarf_haschildren(&child)) {
      // Its inlined subroutines lie within its ranges: walk through it.
      add_inlined(&child, tree);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

const CuIndex::InlineTree* CuIndex::TreeCache::find(const void* function) const {
  auto it = trees_.find(function);
  return it == trees_.end() ? nullptr : &it->second;
}

const CuIndex::InlineTree& CuIndex::TreeCache::insert(const void* function, InlineTree tree) {
  if (order_.size() < kCapacity) {
    order_.push_back(function);
  } else {
    trees_.erase(order_[next_]);
    order_[next_] = function;
    next_ = (next_ + 1) % kCapacity;
  }
  return trees_.emplace(function, std::move(tree)).first->second;
}

const CuIndex::InlineTree& CuIndex::tree_of(const Dwarf_Die& function) {
  if (const InlineTree* cached = trees_.find(function.addr)) return *cached;
  InlineTree tree;
  tree.function = function;
  Dwarf_Die die = function;
  add_inlined(&die, tree);
  tree.nodes.shrink_to_fit();
  tree.ranges.shrink_to_fit();
  return trees_.insert(function.addr, std::move(tree));
}

bool CuIndex::scopes(uint64_t address, std::vector<Dwarf_Die>& chain) {
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

  // Down the flattened tree: into a node that contains the address (its
  // children follow it), past one that does not (to its subtree's end).
  const InlineTree& tree = tree_of(best->function);
  size_t i = 0, end = tree.nodes.size();
  while (i < end) {
    const InlineTree::Node& node = tree.nodes[i];
    bool contains = false;
    for (uint32_t r = node.first_range; r < node.end_range && !contains; ++r)
      contains = address >= tree.ranges[r].first && address < tree.ranges[r].second;
    if (contains) {
      // The same unit as the function: only the DIE's position differs
      // (libdw reads its abbreviation again when `abbrev` is null).
      Dwarf_Die die = tree.function;
      die.addr = node.die;
      die.abbrev = nullptr;
      chain.push_back(die);
      end = node.subtree_end;
      ++i;
    } else {
      i = node.subtree_end;
    }
  }
  return true;
}

}  // namespace spoor::symbolizer
