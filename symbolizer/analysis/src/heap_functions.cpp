// Sites to functions: a hash of each site's function identity to its row.
#include "spoor/analysis/heap_functions.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

#include "spoor/analysis/library_glue.h"

namespace spoor::analysis {
namespace {

// What makes two first frames one function: the name within its module;
// without a name, the start of the code its call frame information says
// holds it, else the very address (module+offset, or the raw address
// outside every module). The leading byte keeps the kinds apart.
std::string identity(const Frame& f) {
  if (!f.function.empty()) return "f" + f.module + '\0' + f.function;
  if (!f.module.empty() && f.has_code_start) return "c" + f.module + '\0' + std::to_string(f.code_start);
  if (!f.module.empty()) return "m" + f.module + '\0' + std::to_string(f.module_offset);
  return "a" + std::to_string(f.address);
}

void add(HeapSite& sum, const HeapSite& site) {
  sum.allocated_bytes += site.allocated_bytes;
  sum.calls += site.calls;
  sum.temporary += site.temporary;
  sum.peak_bytes += site.peak_bytes;  // every site's bytes at the same moment: they add up
  sum.leaked_bytes += site.leaked_bytes;
  sum.leaked_blocks += site.leaked_blocks;
}

bool allocates_more(const HeapSite& a, const HeapSite& b) {
  return a.allocated_bytes != b.allocated_bytes ? a.allocated_bytes > b.allocated_bytes : a.calls > b.calls;
}

// The frame a site's function row is named after: its first, or, when
// that is the C++ library's glue (std::allocator, operator new) or an
// allocator wrapper (CRYPTO_zalloc, g_malloc), the first of the program's
// own above it, as the site rows name it (library_glue.h). Only then, when
// the first frame has no name, or when it is CPython's (a Python
// function may be above it), is the whole stack symbolized.
std::optional<Frame> own_frame(StackKey stack, SymbolizedStacks& symbols) {
  std::optional<Frame> first = symbols.first_frame(stack, StackUse::call);
  if (!first || (!first->function.empty() && !is_library_glue(*first) && !is_allocator_wrapper(first->function) &&
                 !in_python_interpreter(*first)))
    return first;
  // Not kept: this runs for nearly every site of a Python program, and
  // only the sites the report shows need their frames again.
  std::vector<Frame> frames = symbols.frames_not_kept(stack, StackUse::call);
  if (frames.empty()) return first;
  return std::move(frames[own_frame_index(frames)]);
}

}  // namespace

std::vector<HeapFunction> heap_functions(const HeapProfile& profile, SymbolizedStacks& symbols) {
  std::vector<HeapFunction> rows;
  // The best site of each row so far, to pick its top stack.
  std::vector<const HeapSite*> top_site;
  std::unordered_map<std::string, size_t> row_of;
  for (const HeapSite& site : profile.sites) {
    std::optional<Frame> first = site.stack == 0 ? std::nullopt : own_frame(site.stack, symbols);
    std::string key = site.stack == 0 ? "0" : first ? identity(*first) : "?";
    auto [it, inserted] = row_of.try_emplace(std::move(key), rows.size());
    if (inserted) {
      HeapFunction row;
      row.kind = site.stack == 0 ? AllocatorKind::no_stack : first ? AllocatorKind::frame : AllocatorKind::unknown_stack;
      rows.push_back(std::move(row));
      top_site.push_back(&site);
    }
    HeapFunction& r = rows[it->second];
    const HeapSite*& best = top_site[it->second];
    // The row is named after its top stack's first frame (the same
    // function whichever stack; the file and line are that stack's).
    if (inserted || allocates_more(site, *best)) {
      best = &site;
      if (first) r.frame = std::move(*first);
    }
    add(r.totals, site);
    ++r.stacks;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].top_site = *top_site[i];
    rows[i].totals.stack = top_site[i]->stack;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const HeapFunction& a, const HeapFunction& b) { return allocates_more(a.totals, b.totals); });
  return rows;
}

}  // namespace spoor::analysis
