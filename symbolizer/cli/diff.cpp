// spoor diff: where two recordings' heaps differ, function by function
// (the allocating functions of spoor report, summed over every image of
// each trace), largest change in bytes allocated first.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.h"
#include "command.h"
#include "report_format.h"
#include "spoor/analysis/heap.h"
#include "spoor/analysis/heap_functions.h"
#include "spoor/analysis/load.h"
#include "spoor/analysis/symbolized_stacks.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

namespace an = spoor::analysis;
using nlohmann::json;

constexpr OptionSpec kOptions[] = {{"--format", true}, {"--top", true}, {"--debug-dir", true}};

// What one trace allocated through one function, or in all.
struct Figures {
  uint64_t allocated_bytes = 0;
  uint64_t calls = 0;
  uint64_t temporary = 0;
  uint64_t leaked_bytes = 0;
  uint64_t peak_bytes = 0;  // totals only: the largest image's peak
};

struct Side {
  Figures totals;
  std::map<std::string, Figures> functions;  // by key()
  uint64_t events = 0;
};

// A function of one build is the same function of another by its name
// and its module's file name (the paths and load addresses may differ);
// one without a symbol only by where its code starts (its call frame
// information's) or else its module+offset, which match only the same
// build.
std::string key(const an::HeapFunction& f) {
  switch (f.kind) {
    case an::AllocatorKind::no_stack: return "(no stack)";
    case an::AllocatorKind::unknown_stack: return "(stack not in the trace)";
    case an::AllocatorKind::frame: break;
  }
  const std::string module = an::base_name(f.frame.module);
  if (!f.frame.function.empty()) return short_function(f.frame.function) + "  (" + module + ")";
  return f.frame.function_or_location();  // as heap_functions.h merges the sites
}

void add(Figures& into, const an::HeapSite& s) {
  into.allocated_bytes += s.allocated_bytes;
  into.calls += s.calls;
  into.temporary += s.temporary;
  into.leaked_bytes += s.leaked_bytes;
}

// Reads one trace's heap. Damage is said on stderr; what came before it counts.
std::optional<Side> read_side(const std::string& path, const symbolizer::Options& symbols, bool& damaged) {
  std::optional<reader::Trace> trace = open_trace(path);
  if (!trace) return std::nullopt;
  an::HeapAnalysis heap;
  an::EventVisitor* const visitors[] = {&heap};
  an::LoadOptions load;
  load.debug_dirs = symbols.debug_dirs;
  const an::TraceModel model = an::load_trace(*trace, visitors, load);
  an::SymbolizedStacks stacks(model, symbols);
  Side side;
  side.events = model.events;
  for (const an::HeapProfile& p : heap.profiles()) {
    side.totals.allocated_bytes += p.allocated_bytes;
    side.totals.calls += p.alloc_calls + p.realloc_calls;
    side.totals.temporary += p.temporary;
    side.totals.leaked_bytes += p.leaked_bytes;
    side.totals.peak_bytes = std::max(side.totals.peak_bytes, p.peak_bytes);
    for (const an::HeapFunction& f : an::heap_functions(p, stacks)) {
      const std::string k = key(f);
      add(side.functions[k], f.totals);
    }
  }
  damaged = report_damage(path, model.health.damage, model.events) != kExitOk || damaged;
  return side;
}

int64_t change(uint64_t before, uint64_t after) { return static_cast<int64_t>(after) - static_cast<int64_t>(before); }

json figures_json(const Figures& f, bool with_peak) {
  json j = {{"allocated_bytes", f.allocated_bytes}, {"calls", f.calls}, {"temporary", f.temporary},
            {"leaked_bytes", f.leaked_bytes}};
  if (with_peak) j["peak_bytes"] = f.peak_bytes;
  return j;
}

// "+1.50 MiB (+25.0%)", "-512 B (gone)", "0 B", "+2.00 KiB (new)".
std::string bytes_change_text(uint64_t before, uint64_t after) {
  if (before == after) return "0 B";
  std::string s = (after > before ? "+" : "-") + bytes_text(after > before ? after - before : before - after);
  if (before == 0) return s + " (new)";
  if (after == 0) return s + " (gone)";
  char pct[32];
  std::snprintf(pct, sizeof pct, " (%+.1f%%)", 100.0 * static_cast<double>(change(before, after)) / static_cast<double>(before));
  return s + pct;
}

std::string count_change_text(uint64_t before, uint64_t after) {
  if (before == after) return "0";
  return (after > before ? "+" : "-") + count_text(after > before ? after - before : before - after);
}

int run_diff(const std::vector<std::string>& words) {
  std::optional<Args> args = parse_args("diff", words, kOptions);
  if (!args) return kExitUsage;
  if (args->positional.size() != 2)
    return usage_error("diff", "expects two traces, BASE and NEW, got " + std::to_string(args->positional.size()));
  const std::optional<std::string> format_name = parse_format("diff", *args, {"text", "json"});
  if (!format_name) return kExitUsage;
  const std::string& format = *format_name;
  const std::optional<size_t> top_rows = parse_top("diff", *args);
  if (!top_rows) return kExitUsage;
  const size_t top = *top_rows;
  symbolizer::Options symbols;
  if (const std::string* d = args->option("--debug-dir")) symbols.debug_dirs.push_back(*d);

  bool damaged = false;
  const std::optional<Side> base = read_side(args->positional[0], symbols, damaged);
  if (!base) return kExitTrace;
  const std::optional<Side> next = read_side(args->positional[1], symbols, damaged);
  if (!next) return kExitTrace;

  // Every function of either side, largest change in bytes first, then in calls.
  struct Row {
    std::string key;
    Figures before, after;
  };
  std::vector<Row> rows;
  std::map<std::string, size_t> row_of;
  for (const auto& [k, f] : base->functions) {
    row_of[k] = rows.size();
    rows.push_back({k, f, {}});
  }
  for (const auto& [k, f] : next->functions) {
    auto [it, fresh] = row_of.try_emplace(k, rows.size());
    if (fresh) rows.push_back({k, {}, f});
    else rows[it->second].after = f;
  }
  auto magnitude = [](int64_t v) { return v < 0 ? -static_cast<uint64_t>(v) : static_cast<uint64_t>(v); };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    const uint64_t da = magnitude(change(a.before.allocated_bytes, a.after.allocated_bytes));
    const uint64_t db = magnitude(change(b.before.allocated_bytes, b.after.allocated_bytes));
    if (da != db) return da > db;
    return magnitude(change(a.before.calls, a.after.calls)) > magnitude(change(b.before.calls, b.after.calls));
  });
  const size_t changed = static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const Row& r) {
    return r.before.allocated_bytes != r.after.allocated_bytes || r.before.calls != r.after.calls;
  }));
  rows.resize(std::min(rows.size(), std::min(top, changed)));

  Output out;
  if (format == "json") {
    json j;
    j["base"] = {{"path", args->positional[0]}, {"events", base->events}, {"heap", figures_json(base->totals, true)}};
    j["new"] = {{"path", args->positional[1]}, {"events", next->events}, {"heap", figures_json(next->totals, true)}};
    j["changed_functions"] = changed;
    json arr = json::array();
    for (const Row& r : rows)
      arr.push_back({{"function", r.key},
                     {"base", figures_json(r.before, false)},
                     {"new", figures_json(r.after, false)},
                     {"allocated_bytes_change", change(r.before.allocated_bytes, r.after.allocated_bytes)},
                     {"calls_change", change(r.before.calls, r.after.calls)},
                     {"leaked_bytes_change", change(r.before.leaked_bytes, r.after.leaked_bytes)}});
    j["functions"] = std::move(arr);
    out.buffer() = j.dump(2) + "\n";
  } else {
    std::string& o = out.buffer();
    o += "spoor diff: " + args->positional[0] + " -> " + args->positional[1] + "\n";
    o += "  the heap of every image of each trace, summed (peak: the largest image's)\n\n";
    Table t({{"", Table::left}, {"BASE", Table::right}, {"NEW", Table::right}, {"CHANGE", Table::left}});
    const Figures& a = base->totals;
    const Figures& b = next->totals;
    t.row({"allocated", bytes_text(a.allocated_bytes), bytes_text(b.allocated_bytes),
           bytes_change_text(a.allocated_bytes, b.allocated_bytes)});
    t.row({"calls", count_text(a.calls), count_text(b.calls), count_change_text(a.calls, b.calls)});
    t.row({"temporary", count_text(a.temporary), count_text(b.temporary), count_change_text(a.temporary, b.temporary)});
    t.row({"peak", bytes_text(a.peak_bytes), bytes_text(b.peak_bytes), bytes_change_text(a.peak_bytes, b.peak_bytes)});
    t.row({"leaked", bytes_text(a.leaked_bytes), bytes_text(b.leaked_bytes),
           bytes_change_text(a.leaked_bytes, b.leaked_bytes)});
    t.print(o, "  ");
    o += "\n  allocating functions by change in bytes allocated (" + std::to_string(changed) + " changed)\n";
    Table f({{"ALLOCATED +/-", Table::left}, {"CALLS +/-", Table::right}, {"LEAKED +/-", Table::left},
             {"ALLOCATED BASE", Table::right}, {"NEW", Table::right}, {"FUNCTION", Table::left}});
    for (const Row& r : rows)
      f.row({bytes_change_text(r.before.allocated_bytes, r.after.allocated_bytes),
             count_change_text(r.before.calls, r.after.calls),
             bytes_change_text(r.before.leaked_bytes, r.after.leaked_bytes), bytes_text(r.before.allocated_bytes),
             bytes_text(r.after.allocated_bytes), r.key});
    if (f.empty()) o += "    (none: every function allocated the same bytes in as many calls)\n";
    else f.print(o, "    ");
  }
  out.flush();
  return damaged ? kExitTrace : kExitOk;
}

}  // namespace

const Command kDiffCommand = {
    "diff",
    "Compare the heaps of two traces, function by function",
    R"(usage: spoor diff BASE NEW [--format text|json] [--top N] [--debug-dir DIR]

Reads two traces, BASE and NEW (two recordings of one program, before and
after a change, say), and prints how their heaps differ: bytes allocated,
allocation calls, temporary allocations, peak and leaked bytes, summed over
every image of each trace (peak: the largest image's); then the allocating
functions (as spoor report ranks them: the function that called the
allocator, above the language library and allocator wrappers), those whose
bytes or calls changed, largest change in bytes first, with both sides'
bytes. A function is matched by its name and its module's file name; one
without a symbol by its module+offset, which matches only within one build.

options:
  --format text   aligned tables (default); changes as +/- with the percent
  --format json   one JSON document: both sides' totals and each function's
                  figures and changes
  --top N         function rows (default 10)
  --debug-dir D   where to look for separate debug info first

exit status: 0 when both traces were read whole; 1 when one cannot be read
or is damaged (what came before the damage counts; stderr says where);
2 for a usage error.
)",
    run_diff};

}  // namespace spoor::cli
