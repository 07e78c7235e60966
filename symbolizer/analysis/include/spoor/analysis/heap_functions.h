// A heap profile's allocation sites merged by the function that allocates:
// the innermost function of each site's first frame (the code that called
// malloc, new or realloc), as heaptrack_print's first view groups them; of
// the first frame above the C++ library's glue when the first is glue
// (library_glue.h: std::allocator, operator new), as the site rows name
// their sites. A
// function reached through several call paths is one row here and one
// site (whole stack) per path in HeapProfile::sites.
//
// A function is its name and its module (two static functions of one name
// in two libraries are two rows). A first frame with no symbol is the
// function its module's call frame information places it in ("function at
// libfoo.so+0x1a40"), else its module+offset, exactly as a site's row
// names it. Allocations recorded
// without a stack are one row, and so are those whose stack the trace
// never described.
#ifndef SPOOR_ANALYSIS_HEAP_FUNCTIONS_H
#define SPOOR_ANALYSIS_HEAP_FUNCTIONS_H

#include <cstdint>
#include <vector>

#include "spoor/analysis/heap.h"
#include "spoor/analysis/symbolized_stacks.h"

namespace spoor::analysis {

enum class AllocatorKind : uint8_t {
  frame,          // `frame` names the function (or the address when it has no symbol)
  no_stack,       // the sites of stack 0
  unknown_stack,  // sites whose stack the trace never described
};

struct HeapFunction {
  AllocatorKind kind = AllocatorKind::frame;
  // The first frame of top_site's stack (kind frame): its function,
  // module and file name the row; its line is that stack's.
  Frame frame;
  HeapSite totals;      // the merged sites' sums (totals.stack: top_site's)
  uint64_t stacks = 0;  // sites merged
  HeapSite top_site;    // the merged site that allocated most bytes (then calls)
};

// Every function of `profile`, most bytes allocated first (then most
// calls; ties keep the order of first allocation). Cost: one first_frame()
// per site (one symbolizer lookup per distinct first address; the stacks'
// other frames are symbolized only when the first is glue) and one hash
// lookup.
std::vector<HeapFunction> heap_functions(const HeapProfile& profile, SymbolizedStacks& symbols);

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_HEAP_FUNCTIONS_H
