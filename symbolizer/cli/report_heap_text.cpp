// The heap section of `spoor report`'s text form: per program image, the
// summary, bytes live over time, the top allocating functions and sites
// (each stack printed once, numbered), the leaks and the allocation sizes.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "event_text.h"
#include "report_format.h"
#include "report_text_parts.h"
#include "spoor/analysis/library_glue.h"

namespace spoor::cli::text {
namespace {

// Images whose heap is shown in full; the others get one line each (the
// JSON form has every one in full).
constexpr size_t kHeapProcessesInFull = 3;

// A site is named after its first frame above the language library's glue
// and the allocator wrappers (analysis/library_glue.h), the program's own
// code.
std::vector<analysis::Frame> frames_of(const json& site) {
  std::vector<analysis::Frame> frames;
  if (!site.contains("frames")) return frames;
  for (const json& f : site["frames"]) {
    analysis::Frame frame;
    frame.function = str(f, "function");
    frame.file = str(f, "file");
    frame.module = str(f, "module");
    frames.push_back(std::move(frame));
  }
  return frames;
}

// The index of the frame a site is named after (0 when no frame is the
// program's own): as build_report found it on the whole stack when it
// kept only the frames the text shows.
size_t own_frame(const json& site) {
  if (site.contains("own_frame")) return u(site, "own_frame");
  return analysis::own_frame_index(frames_of(site));
}

// All the frames of a site's stack, those kept or not.
size_t frames_total(const json& site) {
  if (site.contains("frames_total")) return u(site, "frames_total");
  return site.contains("frames") ? site["frames"].size() : 0;
}

// "1 frame", "3 frames".
std::string frame_count(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// A site's row: the program's frame, and what it reached the allocator
// through: "(through 3 library frames)", "(through CRYPTO_zalloc, 2 frames)".
std::string site_cell(const json& site) {
  const std::vector<analysis::Frame> frames = frames_of(site);
  const size_t own = own_frame(site);
  if (own == 0) return function_cell(site);
  std::string wrapper;
  for (size_t i = 0; i < own; ++i)
    if (analysis::is_allocator_wrapper(frames[i].function)) wrapper = short_function(frames[i].function);
  return frame_label(site["frames"][own]) + "  (through " +
         (wrapper.empty() ? frame_count(own, "library frame") : wrapper + ", " + frame_count(own, "frame")) + ")";
}

// The frames under a site, its callers after the one the row names.
void stack_notes(Table& t, const json& site, size_t max_frames) {
  if (!site.contains("frames")) return;
  const json& frames = site["frames"];
  const size_t first = own_frame(site) + 1, total = frames_total(site);
  for (size_t i = first; i < frames.size() && i < first + max_frames; ++i) t.note("<- " + frame_label(frames[i]));
  if (total > first + max_frames) t.note("   (" + frame_count(total - first - max_frames, "more frame") + ")");
}

// Sites are numbered as they first appear; a site met again in a later
// ranking is named by its number, its stack printed once.
using SiteNumbers = std::map<uint64_t, size_t>;

void site_table(const json& sites, const std::string& title, SiteNumbers& numbers, std::string& out) {
  out += "\n  " + title + "\n";
  if (sites.empty()) {
    out += "    (none)\n";
    return;
  }
  Table t({{"#", Table::right}, {"ALLOCATED", Table::right}, {"CALLS", Table::right}, {"TEMPORARY", Table::right},
           {"AT PEAK", Table::right}, {"LEAKED", Table::right}, {"SITE (the code that allocates, then its callers)", Table::left}});
  for (const json& s : sites) {
    auto [it, first] = numbers.try_emplace(u(s, "stack_key"), numbers.size() + 1);
    t.row({std::to_string(it->second), bytes_text(u(s, "allocated_bytes")), count_text(u(s, "calls")),
           count_text(u(s, "temporary")), bytes_text(u(s, "peak_bytes")), bytes_text(u(s, "leaked_bytes")),
           site_cell(s)});
    if (first) stack_notes(t, s, 4);
  }
  t.print(out, "    ");
}

// A merged row's function: its file when known (the lines differ from
// stack to stack), else the module it is in.
std::string allocating_function_cell(const json& f) {
  if (str(f, "kind") != "function") return str(f, "function");
  std::string s = short_function(str(f, "symbol"));
  if (!str(f, "file").empty()) return s + "  " + analysis::base_name(str(f, "file"));
  if (!str(f, "module").empty()) return s + "  (" + analysis::base_name(str(f, "module")) + ")";
  return s;
}

// The caller under a merged row's top stack: its first frame past the
// allocating address's inline chain.
const json* top_caller(const json& f) {
  if (!f.contains("top_stack") || !f["top_stack"].contains("frames")) return nullptr;
  const json& frames = f["top_stack"]["frames"];
  if (frames.empty()) return nullptr;
  // The row's function is the top stack's own frame, above the C++
  // library's glue: its caller comes after that frame's inline chain.
  const size_t own = own_frame(f["top_stack"]);
  for (size_t i = own + 1; i < frames.size(); ++i)
    if (str(frames[i], "address") != str(frames[own], "address")) return &frames[i];
  return nullptr;
}

void allocating_function_table(const json& functions, uint64_t total, std::string& out) {
  out += "\n  top allocating functions (" + count_text(total) +
         " in all: the sites below merged by the program's function that allocated)\n";
  if (functions.empty()) {
    out += "    (none)\n";
    return;
  }
  Table t({{"ALLOCATED", Table::right}, {"CALLS", Table::right}, {"TEMPORARY", Table::right}, {"AT PEAK", Table::right},
           {"LEAKED", Table::right}, {"STACKS", Table::right}, {"FUNCTION", Table::left}});
  for (const json& f : functions) {
    t.row({bytes_text(u(f, "allocated_bytes")), count_text(u(f, "calls")), count_text(u(f, "temporary")),
           bytes_text(u(f, "peak_bytes")), bytes_text(u(f, "leaked_bytes")), count_text(u(f, "stacks")),
           allocating_function_cell(f)});
    const json* caller = u(f, "stacks") > 1 ? top_caller(f) : nullptr;
    if (caller != nullptr)
      t.note("most through <- " + frame_label(*caller) + " (" +
             bytes_text(u(f["top_stack"], "allocated_bytes")) + ")");
  }
  t.print(out, "    ");
}

// "pid 12", or "pid 12, exec #2 (8.1 ms to 9.0 ms)" for one image of a
// process that exec'd.
std::string image_title(const json& p) {
  std::string t = "pid " + std::to_string(u(p, "pid"));
  if (u(p, "images_in_process") <= 1) return t;
  const uint64_t n = u(p, "exec_count");
  return t + (n == 0 ? ", first image" : ", exec #" + std::to_string(n)) + " (" + ms_text(i64(p, "image_start_ns")) +
         " to " + ms_text(i64(p, "image_end_ns")) + ")";
}

// An image's bytes live over time: one column per column of the
// timeline, as high as the most bytes live in it.
void live_over_time_chart(const json& p, std::string& out) {
  if (!p.contains("live_over_time")) return;
  const json& t = p["live_over_time"];
  const std::vector<uint64_t> most = t["most_live_bytes"].get<std::vector<uint64_t>>();
  const int64_t column_ns = i64(t, "column_ns"), start_ns = i64(t, "start_ns");
  // The image's end, within the last column.
  const int64_t end_ns = p.contains("image_end_ns") ? i64(p, "image_end_ns")
                                                     : start_ns + column_ns * static_cast<int64_t>(most.size());
  bar_chart("bytes live over time (each column " + duration_text(column_ns) + ", as high as the most bytes live in it)",
            most, 6, ms_text(start_ns), ms_text(end_ns), out);
}

// The images whose malloc was their own (an allocator in the executable,
// which comes before Spoor's hooks): their heap is not in the trace, and
// the report says so rather than showing them as allocating nothing.
void own_allocator_note(const json& heap, std::string& out) {
  std::map<std::string, std::vector<std::string>> pids_by_owner;
  for (const json& p : heap)
    if (p.contains("own_allocator")) pids_by_owner[str(p, "own_allocator")].push_back(std::to_string(u(p, "pid")));
  for (const auto& [owner, pids] : pids_by_owner) {
    std::string list;
    for (size_t i = 0; i < pids.size() && i < 8; ++i) list += (i ? ", " : "") + pids[i];
    if (pids.size() > 8) list += ", +" + std::to_string(pids.size() - 8) + " more";
    const bool one = pids.size() == 1;
    out += "\n  not recorded: the allocator calls of " + (one ? "pid " + list : std::to_string(pids.size()) + " images") +
           ": " + (one ? "its" : "their") + " malloc is the program's own (LD_PRELOAD cannot\n  wrap it), in " + owner +
           (one ? "" : " (pid " + list + ")") + ". " + (one ? "Its" : "Their") + " mmap calls are recorded.\n";
  }
}

}  // namespace

void print_heap(const json& heap, std::string& out) {
  heading(out, "Heap");
  if (heap.empty()) {
    out += "  (no heap events: record with the Spoor.Heap provider)\n";
    return;
  }
  out += "  One part per program image: an exec starts a new one with an empty heap, so blocks live at the\n"
         "  exec are \"released by exec\", not leaks. A fork child starts with its parent's live blocks: its\n"
         "  frees of them are known frees; those it never frees are counted apart (\"inherited\"), not as\n"
         "  leaks, and none counts in its allocated, peak or leaked bytes.\n";
  own_allocator_note(heap, out);
  // The images that allocated most, in full; the rest in one table.
  std::vector<const json*> by_bytes;
  for (const json& p : heap) by_bytes.push_back(&p);
  std::stable_sort(by_bytes.begin(), by_bytes.end(), [](const json* a, const json* b) {
    return u(*a, "allocated_bytes") > u(*b, "allocated_bytes");
  });
  const size_t in_full = std::min(by_bytes.size(), kHeapProcessesInFull);
  for (size_t i = 0; i < in_full; ++i) {
    const json& p = *by_bytes[i];
    out += "\n  " + image_title(p) + ": " + clipped(str(p, "command_line"), 100) + "\n";
    const bool by_exec = str(p, "ended_by") == "exec";
    const json& calls = p["calls"];
    const uint64_t allocations = u(calls, "alloc") + u(calls, "realloc");
    const json& mm = p["mmap"];
    const std::string mmap_text = count_text(u(mm, "calls")) + " calls mapping " + bytes_text(u(mm, "bytes")) + ", " +
                                  count_text(u(mm, "munmap_calls")) + " munmap (not counted in the heap)";
    Table s({{"", Table::left}, {"", Table::left}});
    if (p.contains("own_allocator")) {  // nothing to show but its mappings
      s.row({"calls", "not recorded: its malloc is its own (above)"});
      s.row({"mmap", mmap_text});
      s.print(out, "  ");
      continue;
    }
    // An image that mapped memory but never allocated has no peak time.
    s.row({"peak heap", u(p, "peak_bytes") == 0 ? bytes_text(0)
                                                : bytes_text(u(p, "peak_bytes")) + " live at " + ms_text(i64(p, "peak_ns"))});
    s.row({"allocated", bytes_text(u(p, "allocated_bytes")) + " in total (" + count_text(u(p, "allocated_bytes")) + " bytes)"});
    s.row({"calls", count_text(u(calls, "alloc")) + " alloc, " + count_text(u(calls, "free")) + " free, " +
                        count_text(u(calls, "realloc")) + " realloc"});
    s.row({"temporary", count_text(u(p, "temporary")) + " allocations freed before any other (" +
                            percent_text(u(p, "temporary"), allocations) + " of allocations)"});
    if (by_exec)
      s.row({"released by exec", bytes_text(u(p, "released_by_exec_bytes")) + " in " +
                                     count_text(u(p, "released_by_exec_blocks")) +
                                     " blocks live when an exec replaced the image (not leaks)"});
    else
      s.row({"leaked", bytes_text(u(p, "leaked_bytes")) + " in " + count_text(u(p, "leaked_blocks")) +
                           " blocks never freed"});
    const json& inh = p["inherited"];
    if (u(inh, "blocks") > 0) {
      s.row({"inherited", count_text(u(inh, "blocks")) + " blocks (" + bytes_text(u(inh, "bytes")) +
                              ") live in the parent at the fork, " + count_text(u(inh, "freed_blocks")) + " freed here"});
      s.row({"", count_text(u(inh, "kept_blocks")) + " blocks (" + bytes_text(u(inh, "kept_bytes")) +
                     ") inherited from the parent and not freed (not leaks)"});
    }
    if (u(p, "unknown_frees") > 0)
      s.row({"unknown frees", count_text(u(p, "unknown_frees")) +
                                  " frees of blocks the trace never saw allocated (allocated before the shim attached "
                                  "to this image, or an Alloc or Fork event lost)"});
    if (u(mm, "calls") > 0) s.row({"mmap", mmap_text});
    s.print(out, "  ");
    if (p.value("cpython", false))
      out += "  CPython: unless it ran with PYTHONMALLOC=malloc, objects of up to 512 bytes come from its own\n"
             "  pools (pymalloc), in arenas it maps itself, and never reach malloc: the calls above are its\n"
             "  larger blocks. To count every object: PYTHONMALLOC=malloc spoor record -- python3 ...\n";

    live_over_time_chart(p, out);
    if (p.contains("top_functions")) allocating_function_table(p["top_functions"], u(p, "functions"), out);
    SiteNumbers numbers;
    site_table(p["top_by_bytes"], "top allocation sites by bytes allocated", numbers, out);
    site_table(p["top_by_calls"], "top allocation sites by calls", numbers, out);
    site_table(p["top_by_peak"], "top allocation sites by bytes live at the peak", numbers, out);
    if (!p["top_by_temporary"].empty())
      site_table(p["top_by_temporary"], "top sites of temporary allocations", numbers, out);
    out += "\n  leaks (blocks not freed when the process ended)\n";
    if (by_exec) {
      out += "    (none: an exec replaced the image)\n";
    } else if (p["leaks"].empty()) {
      out += "    (none)\n";
    } else {
      Table t({{"#", Table::right}, {"LEAKED", Table::right}, {"BLOCKS", Table::right}, {"SITE", Table::left}});
      for (const json& l : p["leaks"]) {
        auto [it, first] = numbers.try_emplace(u(l, "stack_key"), numbers.size() + 1);
        (void)first;
        t.row({std::to_string(it->second), bytes_text(u(l, "leaked_bytes")), count_text(u(l, "leaked_blocks")),
               site_cell(l)});
        stack_notes(t, l, 8);  // a leak's whole path matters: always printed
      }
      t.print(out, "    ");
    }
    out += "\n  allocation sizes\n";
    Table h({{"FROM", Table::right}, {"", Table::left}, {"BELOW", Table::right}, {"ALLOCATIONS", Table::right}, {"", Table::left}});
    uint64_t most = 1;
    for (const json& b : p["size_histogram"]) most = std::max(most, u(b, "count"));
    for (const json& b : p["size_histogram"]) {
      const uint64_t n = u(b, "count");
      const uint64_t max = u(b, "max_bytes");
      h.row({bytes_text(u(b, "min_bytes")), "<= size <", max == 0 ? "1 B" : bytes_text(max + (max != ~uint64_t{0})), count_text(n),
             std::string(static_cast<size_t>((n * 40 + most - 1) / most), '#')});
    }
    h.print(out, "    ");
  }
  if (by_bytes.size() > in_full) {
    out += "\n  " + std::to_string(by_bytes.size() - in_full) +
           " more images, by bytes allocated (--format json has each in full; LEAKED \"exec\": replaced by an exec)\n";
    Table others({{"PID", Table::right}, {"EXEC", Table::right}, {"PEAK", Table::right}, {"ALLOCATED", Table::right},
                  {"CALLS", Table::right}, {"LEAKED", Table::right}, {"INHERITED KEPT", Table::right},
                  {"COMMAND", Table::left}});
    for (size_t i = in_full; i < by_bytes.size(); ++i) {
      const json& p = *by_bytes[i];
      const json& calls = p["calls"];
      if (p.contains("own_allocator")) {  // its heap is not in the trace: no figures to give
        others.row({std::to_string(u(p, "pid")),
                    u(p, "images_in_process") > 1 ? "#" + std::to_string(u(p, "exec_count")) : "", "", "",
                    "not recorded", "", "", clipped(str(p, "command_line"), 80)});
        continue;
      }
      others.row({std::to_string(u(p, "pid")), u(p, "images_in_process") > 1 ? "#" + std::to_string(u(p, "exec_count")) : "",
                  bytes_text(u(p, "peak_bytes")), bytes_text(u(p, "allocated_bytes")),
                  count_text(u(calls, "alloc") + u(calls, "realloc")),
                  str(p, "ended_by") == "exec" ? "exec" : bytes_text(u(p, "leaked_bytes")),
                  u(p["inherited"], "blocks") > 0 ? count_text(u(p["inherited"], "kept_blocks")) + " blocks" : "",
                  clipped(str(p, "command_line"), 80)});
    }
    others.print(out, "    ");
  }
}

}  // namespace spoor::cli::text
