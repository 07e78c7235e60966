#include "report_data.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "report_sched.h"
#include "spoor/analysis/library_glue.h"

namespace spoor::cli {
namespace {

using nlohmann::json;
namespace an = spoor::analysis;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// What names a row without frames: allocations recorded without a stack
// (ID 0), or under one the trace never described.
const char* frameless_name(bool no_stack) { return no_stack ? "(no stack recorded)" : "(stack not in the trace)"; }

// A text report prints at most this many callers after a stack's own
// frame (report_text.cpp: 4 for a site, 8 for a leak); a few more are kept
// for the caller search past an inline chain.
constexpr size_t kTextCallersKept = 16;

struct Context {
  const ReportInputs& in;
  size_t top;
  int64_t t0;  // the first event's time: points in time are relative to it
  bool for_text = false;

  int64_t rel(int64_t ns) const { return ns - t0; }
  const an::TraceModel& model() const { return *in.model; }

  std::string command_of(const an::ProcessInfo& p) const {
    std::string cmd = joined(p.command_line);
    if (!cmd.empty()) return cmd;
    if (!p.name.empty()) return p.name;
    // Known only from its parent's wait: it never loaded the shim.
    return p.events == 0 && p.end ? "(no events of its own: a vfork child, or one that ended untraced)" : "";
  }

  json frame(const an::Frame& f) const {
    json j = {{"function", f.function}, {"address", hex(f.address)}, {"inlined", f.inlined}};
    j["file"] = f.file;
    j["line"] = f.line;
    j["module"] = f.module;
    j["module_offset"] = hex(f.module_offset);
    if (f.has_symbol_offset) j["symbol_offset"] = hex(f.symbol_offset);
    if (f.has_code_start) j["function_start"] = hex(f.code_start);  // no symbol: where its function begins
    return j;
  }

  // The stack as frames, and the function a site or sample is named after.
  void stack_into(json& j, an::StackKey key, an::StackUse use) const {
    const std::vector<an::Frame>& frames = in.symbols->frames(key, use);
    size_t kept = frames.size();
    if (for_text) {
      const size_t own = an::own_frame_index(frames);
      kept = std::min(kept, own + 1 + kTextCallersKept);
      j["own_frame"] = own;
      j["frames_total"] = frames.size();
    }
    json arr = json::array();
    for (size_t i = 0; i < kept; ++i) arr.push_back(frame(frames[i]));
    j["frames"] = std::move(arr);
    if (frames.empty()) {
      j["function"] = frameless_name(key == 0);
      j["location"] = "";
      return;
    }
    const an::Frame& f = frames.front();
    j["function"] = f.function_or_location();
    j["location"] = f.file.empty() ? "" : an::base_name(f.file) + (f.line != 0 ? ":" + std::to_string(f.line) : "");
    if (f.has_symbol_offset) j["symbol_offset"] = hex(f.symbol_offset);
  }
};

// The files an image mapped: the preload's ModuleLoad and the kernel's
// mmap records name the same ones (the loader gives a file one spelling),
// and a file mapped again after a dlclose is still one.
size_t distinct_files(const std::vector<an::Module>& modules) {
  std::unordered_set<std::string_view> paths;
  for (const an::Module& m : modules) paths.insert(m.path);
  return paths.size();
}

// The threads a process ran: an exec keeps the calling thread (the model
// gives each image's main thread an entry of its own), so counted by tid.
size_t distinct_threads(const an::TraceModel& m, const an::ProcessInfo& p) {
  std::unordered_set<uint32_t> tids;
  for (an::ThreadIndex t : p.threads) tids.insert(m.threads[t].tid);
  return tids.size();
}

// Whether the trace gave the thread's own clock at its end: its
// ThreadEnd's, or for an image that exec'd, Exec's (that image began with
// a ThreadStart of its own). Without the thread provider no image has a
// ThreadStart, so all of a thread's images are one, and Exec's clock is
// only the first's.
bool clock_at_end_known(const an::ThreadInfo& th) { return th.ended || (th.started && th.cpu_ns != 0); }

// A thread's own clock (ThreadStart, ThreadEnd, Exec): at its end, as
// Spoor began watching it, and what it used in between.
void put_thread_clock(const an::ThreadInfo& th, json& j) {
  j["cpu_ns"] = th.cpu_ns;
  j["cpu_ns_at_start"] = th.cpu_ns_at_start;
  j["traced_cpu_ns"] = th.traced_cpu_ns();
}

json process_json(const Context& c, const an::ProcessInfo& p) {
  const an::TraceModel& m = c.model();
  json j = {{"pid", p.pid}, {"ppid", p.ppid}, {"name", p.name}, {"command_line", c.command_of(p)},
            {"arguments", p.command_line}, {"events", p.events}};
  j["start_ns"] = c.rel(p.start_ns);
  j["end_ns"] = c.rel(p.end_ns);
  j["duration_ns"] = p.end_ns - p.start_ns;
  j["start_known"] = p.start_known;
  if (p.end) {
    j["exit"] = {{"time_ns", c.rel(p.end->time_ns)}, {"exit_code", p.end->exit_code},
                 {"signal", p.end->signal}, {"core_dumped", p.end->core_dumped}};
    if (p.end->signal != 0) j["exit"]["signal_name"] = signal_name(p.end->signal);
    if (!p.end->how_known) j["exit"]["exit_code"] = nullptr;
    j["ended"] = !p.end->how_known    ? "ended"
                 : p.end->signal != 0 ? "killed by " + signal_name(p.end->signal) + (p.end->core_dumped ? " (core dumped)" : "")
                                      : "exit " + std::to_string(p.end->exit_code);
  } else {
    j["exit"] = nullptr;
    j["ended"] = p.running_at_end ? "running at the end" : "no exit recorded";
  }
  j["running_at_end"] = !p.end && p.running_at_end;
  j["forked"] = p.forked;
  json images = json::array();
  for (an::ImageIndex i : p.images) {
    const an::Image& im = m.images[i];
    images.push_back({{"exec_count", im.exec_count}, {"exe", im.exe}, {"comm", im.comm}, {"cwd", im.cwd},
                      {"command_line", joined(im.command_line)}, {"modules", distinct_files(im.modules)},
                      {"start_ns", c.rel(im.start_ns)}, {"end_ns", c.rel(im.end_ns)}});
  }
  j["images"] = std::move(images);
  if (!p.exec_failures.empty()) j["exec_failures"] = p.exec_failures;
  if (!p.untraceable_exec.empty()) j["untraceable_exec"] = p.untraceable_exec;
  if (!p.samples_off_under.empty()) j["samples_off_under"] = p.samples_off_under;
  json threads = json::array();
  for (an::ThreadIndex t : p.threads) {
    const an::ThreadInfo& th = m.threads[t];
    threads.push_back({{"tid", th.tid}, {"name", th.name()}, {"names", th.names}, {"parent_tid", th.parent_tid},
                       {"start_ns", c.rel(th.start_ns)}, {"end_ns", c.rel(th.end_ns)},
                       {"duration_ns", th.end_ns - th.start_ns}, {"ended", th.ended && !th.with_process},
                       {"events", th.events}});
    put_thread_clock(th, threads.back());
  }
  j["threads"] = std::move(threads);
  j["thread_count"] = distinct_threads(m, p);
  return j;
}

json processes_json(const Context& c) {
  json arr = json::array();
  for (const an::ProcessInfo& p : c.model().processes)
    if (!p.recorder) arr.push_back(process_json(c, p));
  return arr;
}

// --- heap -------------------------------------------------------------------

json site_json(const Context& c, const an::HeapSite& s) {
  json j = {{"allocated_bytes", s.allocated_bytes}, {"calls", s.calls},         {"temporary", s.temporary},
            {"peak_bytes", s.peak_bytes},           {"leaked_bytes", s.leaked_bytes}, {"leaked_blocks", s.leaked_blocks},
            {"stack_id", an::stack_id(s.stack)},    {"stack_key", s.stack}};
  c.stack_into(j, s.stack, an::StackUse::call);
  return j;
}

json top_sites(const Context& c, const an::HeapProfile& p, const std::function<uint64_t(const an::HeapSite&)>& by) {
  std::vector<const an::HeapSite*> sites;
  for (const an::HeapSite& s : p.sites)
    if (by(s) > 0) sites.push_back(&s);
  std::stable_sort(sites.begin(), sites.end(), [&](const an::HeapSite* a, const an::HeapSite* b) { return by(*a) > by(*b); });
  if (sites.size() > c.top) sites.resize(c.top);
  json arr = json::array();
  for (const an::HeapSite* s : sites) arr.push_back(site_json(c, *s));
  return arr;
}

const char* kind_name(const an::HeapFunction& f) {
  switch (f.kind) {
    case an::AllocatorKind::no_stack: return "no_stack";
    case an::AllocatorKind::unknown_stack: return "unknown_stack";
    case an::AllocatorKind::frame: break;
  }
  return f.frame.function.empty() ? "address" : "function";
}

// Sites merged by their first frame's function (heap_functions.h), with
// the stack that allocated most under each, to drill down from.
json top_functions(const Context& c, const std::vector<an::HeapFunction>& functions) {
  json arr = json::array();
  for (size_t i = 0; i < functions.size() && i < c.top; ++i) {
    const an::HeapFunction& f = functions[i];
    const an::HeapSite& s = f.totals;
    json j = {{"allocated_bytes", s.allocated_bytes}, {"calls", s.calls},          {"temporary", s.temporary},
              {"peak_bytes", s.peak_bytes},           {"leaked_bytes", s.leaked_bytes}, {"leaked_blocks", s.leaked_blocks},
              {"stacks", f.stacks},                   {"kind", kind_name(f)}};
    if (f.kind == an::AllocatorKind::frame) {
      j["function"] = f.frame.function_or_location();
      j["symbol"] = f.frame.function;
      j["module"] = f.frame.module;
      j["module_offset"] = hex(f.frame.module_offset);
      j["file"] = f.frame.file;
    } else {
      j["function"] = frameless_name(f.kind == an::AllocatorKind::no_stack);
    }
    j["top_stack"] = site_json(c, f.top_site);
    arr.push_back(std::move(j));
  }
  return arr;
}

// Whether an image ran CPython: its executable is a python (Debian's
// /usr/bin/python3.11 links the interpreter in) or it loaded libpython.
// CPython serves objects of up to 512 bytes from pools in arenas it maps
// itself (pymalloc, unless PYTHONMALLOC says otherwise), so most of its
// objects never reach malloc: the report says so.
bool runs_cpython(const an::Image& image) {
  if (an::base_name(image.exe).starts_with("python")) return true;
  return std::any_of(image.modules.begin(), image.modules.end(),
                     [](const an::Module& m) { return an::base_name(m.path).starts_with("libpython"); });
}

json heap_json(const Context& c) {
  json arr = json::array();
  for (const an::HeapProfile& p : c.in.heap->profiles()) {
    const an::ProcessInfo& proc = c.model().processes[p.process];
    json j = {{"pid", proc.pid}, {"command_line", c.command_of(proc)}};
    // The image's own command (what ran until its exec or the end); the
    // process's last one, or the exe, when the trace does not say.
    j["images_in_process"] = proc.images.size();
    if (p.image < c.model().images.size()) {
      const an::Image& im = c.model().images[p.image];
      j["exec_count"] = im.exec_count;
      j["exe"] = im.exe;
      j["image_start_ns"] = c.rel(im.start_ns);
      j["image_end_ns"] = c.rel(im.end_ns);
      const std::string cmd = joined(im.command_line);
      if (!cmd.empty()) j["command_line"] = cmd;
      else if (!im.exe.empty() && proc.images.size() > 1) j["command_line"] = im.exe;
      if (runs_cpython(im)) j["cpython"] = true;
    }
    j["ended_by"] = p.ended_by_exec ? "exec" : "exit";
    if (!p.own_allocator.empty()) j["own_allocator"] = p.own_allocator;
    j["allocated_bytes"] = p.allocated_bytes;
    j["calls"] = {{"alloc", p.alloc_calls}, {"free", p.free_calls}, {"realloc", p.realloc_calls}};
    j["peak_bytes"] = p.peak_bytes;
    j["peak_ns"] = c.rel(p.peak_ns);
    if (p.timeline.column_ns > 0)
      j["live_over_time"] = {{"start_ns", c.rel(p.timeline.start_ns)},
                             {"column_ns", p.timeline.column_ns},
                             {"most_live_bytes", p.timeline.most_live_bytes}};
    j["temporary"] = p.temporary;
    j["leaked_bytes"] = p.leaked_bytes;
    j["leaked_blocks"] = p.leaked_blocks;
    j["released_by_exec_bytes"] = p.released_by_exec_bytes;
    j["released_by_exec_blocks"] = p.released_by_exec_blocks;
    j["inherited"] = {{"blocks", p.inherited_blocks},         {"bytes", p.inherited_bytes},
                      {"freed_blocks", p.inherited_freed_blocks}, {"freed_bytes", p.inherited_freed_bytes},
                      {"kept_blocks", p.inherited_kept_blocks},   {"kept_bytes", p.inherited_kept_bytes}};
    j["unknown_frees"] = p.unknown_frees;
    j["mmap"] = {{"calls", p.mmap_calls}, {"bytes", p.mmap_bytes}, {"munmap_calls", p.munmap_calls}};
    json hist = json::array();
    for (size_t b = 0; b < p.size_histogram.size(); ++b) {
      if (p.size_histogram[b] == 0) continue;
      const uint64_t from = b == 0 ? 0 : uint64_t{1} << (b - 1);
      const uint64_t to = b == 0 ? 0 : (b == 64 ? ~uint64_t{0} : (uint64_t{1} << b) - 1);
      hist.push_back({{"min_bytes", from}, {"max_bytes", to}, {"count", p.size_histogram[b]}});
    }
    j["size_histogram"] = std::move(hist);
    j["sites"] = p.sites.size();
    const std::vector<an::HeapFunction> functions = an::heap_functions(p, *c.in.symbols);
    j["functions"] = functions.size();
    j["top_functions"] = top_functions(c, functions);
    j["top_by_bytes"] = top_sites(c, p, [](const an::HeapSite& s) { return s.allocated_bytes; });
    j["top_by_calls"] = top_sites(c, p, [](const an::HeapSite& s) { return s.calls; });
    j["top_by_peak"] = top_sites(c, p, [](const an::HeapSite& s) { return s.peak_bytes; });
    j["top_by_temporary"] = top_sites(c, p, [](const an::HeapSite& s) { return s.temporary; });
    j["leaks"] = top_sites(c, p, [](const an::HeapSite& s) { return s.leaked_bytes + s.leaked_blocks; });
    arr.push_back(std::move(j));
  }
  return arr;
}

// --- io ---------------------------------------------------------------------

// A pipe's programs at each end, beside its "pipe:[ino]" path.
void add_pipe_ends(json& j, const an::IoFile& f) {
  if (!f.writers.empty()) j["writers"] = f.writers;
  if (!f.readers.empty()) j["readers"] = f.readers;
}

json totals_json(const an::IoTotals& t) {
  return {{"opens", t.opens},         {"reads", t.reads},
          {"writes", t.writes},       {"other_calls", t.other},
          {"errors", t.errors},       {"bytes_read", t.bytes_read},
          {"bytes_written", t.bytes_written}, {"read_ns", t.read_ns},
          {"write_ns", t.write_ns},   {"total_ns", t.total_ns}};
}

json thread_ref(const Context& c, an::ThreadIndex t) {
  if (t >= c.model().threads.size()) return {{"pid", 0}, {"tid", 0}, {"name", ""}};
  const an::ThreadInfo& th = c.model().threads[t];
  json j = {{"pid", th.pid}, {"tid", th.tid}, {"name", th.name()}};
  // A process that execs has one thread per image under one tid: the image
  // the thread ran in tells its rows apart.
  if (th.process < c.model().processes.size()) {
    const an::ProcessInfo& p = c.model().processes[th.process];
    if (p.images.size() > 1)
      for (an::ImageIndex i : p.images) {
        const an::Image& im = c.model().images[i];
        if (th.start_ns >= im.start_ns && th.start_ns < im.end_ns) j["exec_count"] = im.exec_count;
      }
  }
  return j;
}

json io_json(const Context& c) {
  const an::IoAnalysis& io = *c.in.io;
  json j;
  j["totals"] = totals_json(io.totals());
  if (const an::IoTimeline& t = io.timeline(); t.column_ns > 0)
    j["over_time"] = {{"start_ns", c.rel(t.start_ns)},
                      {"column_ns", t.column_ns},
                      {"read_bytes", t.read_bytes},
                      {"written_bytes", t.written_bytes}};
  if (const an::IoAioCounts& a = io.aio(); a.requests + a.results != 0)
    j["aio"] = {{"requests", a.requests}, {"results", a.results}, {"uncollected", a.uncollected}};
  if (const an::IoUringCounts& u = io.uring(); u.requests + u.completions + u.unseen != 0)
    j["io_uring"] = {{"requests", u.requests},
                     {"completions", u.completions},
                     {"uncollected", u.uncollected},
                     {"unseen", u.unseen},
                     {"unmatched", u.unmatched}};
  // A descriptor the process inherited and never used (the shell's, a
  // wrapper's) is no file of the program's: rows only for files with calls.
  std::vector<const an::IoFile*> files;
  for (const an::IoFile& f : io.files()) {
    const an::IoTotals& t = f.totals;
    if (t.opens + t.reads + t.writes + t.other != 0) files.push_back(&f);
  }
  std::stable_sort(files.begin(), files.end(), [](const an::IoFile* a, const an::IoFile* b) {
    if (a->totals.total_ns != b->totals.total_ns) return a->totals.total_ns > b->totals.total_ns;
    return a->totals.bytes_read + a->totals.bytes_written > b->totals.bytes_read + b->totals.bytes_written;
  });
  j["file_count"] = files.size();
  if (files.size() > c.top) files.resize(c.top);
  json arr = json::array();
  for (const an::IoFile* f : files) {
    json fj = totals_json(f->totals);
    fj["path"] = f->path;
    add_pipe_ends(fj, *f);
    fj["pids"] = f->pids;
    arr.push_back(std::move(fj));
  }
  j["files"] = std::move(arr);
  json threads = json::array();
  for (const an::IoThread& t : io.threads()) {
    json tj = thread_ref(c, t.thread);
    tj.update(totals_json(t.totals));
    threads.push_back(std::move(tj));
  }
  j["threads"] = std::move(threads);
  json slow = json::array();
  std::vector<an::IoOperation> ops = io.slowest();
  if (ops.size() > c.top) ops.resize(c.top);
  for (const an::IoOperation& op : ops) {
    json oj = {{"call", op.call},         {"path", io.files()[op.file].path}, {"start_ns", c.rel(op.start_ns)},
               {"duration_ns", op.duration_ns}, {"result", op.result}};
    add_pipe_ends(oj, io.files()[op.file]);
    oj["thread"] = thread_ref(c, op.thread);
    slow.push_back(std::move(oj));
  }
  j["slowest"] = std::move(slow);
  return j;
}

// --- cpu --------------------------------------------------------------------

// `self_only`: the ranking by self time lists functions that have some.
json functions_json(const an::CpuProfile& p, size_t top, bool self_only) {
  json arr = json::array();
  for (size_t i = 0; i < p.functions.size() && arr.size() < top; ++i) {
    const an::FunctionCost& f = p.functions[i];
    if (self_only && f.self == 0) continue;
    arr.push_back({{"function", f.function}, {"location", f.location}, {"self", f.self}, {"inclusive", f.inclusive}});
  }
  return arr;
}

// Functions of `cpu`'s samples: overall, by inclusive time, per thread.
void profile_into(const Context& c, const an::CpuAnalysis& cpu, const an::CpuProfile& all, json& j) {
  j["functions"] = functions_json(all, c.top, true);
  // Inclusive ranking too: where the time goes below each caller.
  an::CpuProfile by_inclusive = all;
  std::stable_sort(by_inclusive.functions.begin(), by_inclusive.functions.end(),
                   [](const an::FunctionCost& a, const an::FunctionCost& b) { return a.inclusive > b.inclusive; });
  j["functions_by_inclusive"] = functions_json(by_inclusive, c.top, false);
  json threads = json::array();
  // The busiest `top` threads get their functions: each profile walks
  // every sampled stack, so not all of a thousand threads.
  for (const auto& [t, periods] : cpu.threads()) {
    json tj = thread_ref(c, t);
    tj["periods"] = periods;
    if (t < c.model().threads.size() && c.model().threads[t].cpu_ns != 0 && clock_at_end_known(c.model().threads[t]))
      put_thread_clock(c.model().threads[t], tj);
    if (threads.size() < c.top)
      tj["functions"] = functions_json(cpu.profile(*c.in.symbols, t), std::min<size_t>(c.top, 5), true);
    threads.push_back(std::move(tj));
  }
  j["threads"] = std::move(threads);
}

json cpu_json(const Context& c) {
  const an::CpuAnalysis& cpu = *c.in.cpu;
  const an::CpuProfile all = cpu.profile(*c.in.symbols);
  json j = {{"periods", all.periods}, {"samples", all.samples}, {"source", "preload"}};
  // The rate the trace says the sampler ran at; a trace without it was
  // sampled at spoor record's default.
  const uint32_t recorded_hz = c.model().sample_hz;
  const uint64_t hz = recorded_hz != 0 ? recorded_hz : an::kDefaultSampleHz;
  j["sample_hz"] = hz;
  j["sample_hz_recorded"] = recorded_hz != 0;
  j["period_ns"] = 1'000'000'000 / hz;
  j["cpu_ms"] = static_cast<double>(all.periods) * static_cast<double>(1'000'000'000 / hz) / 1e6;
  // What the threads' own clocks said (ThreadStart, ThreadEnd, Exec),
  // beside what the samples stand for: the timer is checked at the
  // kernel's tick, and a thread that ran a few ticks may have no sample at
  // all. A clock runs on across exec, so each image's thread counts from
  // its start: what it used while traced, and before, untraced (the
  // loader), which no sample can see. Threads are counted as the headline
  // counts them: one that exec'd is one thread, whatever its images.
  uint64_t clock_ns = 0, traced_ns = 0, untraced_ns = 0;
  std::unordered_set<uint64_t> clock_threads;
  for (const an::ThreadInfo& th : c.model().threads)
    if (th.cpu_ns != 0 && clock_at_end_known(th)) {
      clock_ns += th.cpu_ns;
      traced_ns += th.traced_cpu_ns();
      untraced_ns += th.untraced_cpu_ns();
      clock_threads.insert(uint64_t{th.pid} << 32 | th.tid);
    }
  j["threads_cpu_ns"] = clock_ns;
  j["threads_traced_cpu_ns"] = traced_ns;
  j["threads_untraced_cpu_ns"] = untraced_ns;
  j["threads_with_cpu_time"] = clock_threads.size();
  // Sampled threads whose clock the trace never gave at their end (-p
  // without the thread provider, or a killed process): the clocks above
  // leave them out, and the report says so, lest a reader take the clocks'
  // sum for all the CPU time the samples saw.
  uint64_t unclocked_periods = 0, unclocked_threads = 0;
  for (const auto& [thread, periods] : cpu.threads())
    if (thread >= c.model().threads.size() || !clock_at_end_known(c.model().threads[thread])) {
      unclocked_periods += periods;
      ++unclocked_threads;
    }
  j["periods_in_threads_without_clock"] = unclocked_periods;
  j["sampled_threads_without_clock"] = unclocked_threads;
  profile_into(c, cpu, all, j);
  return j;
}

// --- kernel -----------------------------------------------------------------

json kernel_json(const Context& c) {
  const an::KernelAnalysis& k = *c.in.kernel;
  const an::TraceModel& m = c.model();
  json j = {{"events", k.events()}};
  // Threads by time off the CPU: where waiting happened. A thread that
  // exec'd is one row (the model has a thread per image), named by its
  // images in order.
  struct Row {
    an::KernelThread sum;
    std::vector<std::string> names;
  };
  std::vector<Row> rows;
  std::map<std::pair<uint32_t, uint32_t>, size_t> row_of;  // (pid, tid)
  for (const an::KernelThread& t : k.threads()) {
    const an::ThreadInfo& th = m.threads[t.thread];
    auto [it, inserted] = row_of.try_emplace({th.pid, th.tid}, rows.size());
    if (inserted) rows.push_back({t, {}});
    Row& r = rows[it->second];
    if (!inserted) {
      r.sum.switches += t.switches;
      r.sum.preempted += t.preempted;
      r.sum.blocked += t.blocked;
      r.sum.off_cpu_ns += t.off_cpu_ns;
      r.sum.minor_faults += t.minor_faults;
      r.sum.major_faults += t.major_faults;
      r.sum.syscalls += t.syscalls;
      r.sum.samples += t.samples;
    }
    for (const std::string& n : th.names)
      if (r.names.empty() || r.names.back() != n) r.names.push_back(n);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.sum.off_cpu_ns != b.sum.off_cpu_ns ? a.sum.off_cpu_ns > b.sum.off_cpu_ns : a.sum.switches > b.sum.switches;
  });
  json tarr = json::array();
  uint64_t switches = 0, preempted = 0, blocked = 0;
  int64_t off_cpu = 0;
  for (const Row& r : rows) {
    const an::KernelThread* t = &r.sum;
    json tj = thread_ref(c, t->thread);
    const an::ThreadInfo& th = m.threads[t->thread];
    const std::vector<std::string> images = thread_images(m, th.pid, th.tid, r.names);
    tj["images"] = images;  // the one before an exec first
    tj["name"] = images_text(images);
    tj.update({{"switches", t->switches}, {"preempted", t->preempted}, {"blocked", t->blocked},
               {"off_cpu_ns", t->off_cpu_ns}, {"minor_faults", t->minor_faults}, {"major_faults", t->major_faults},
               {"syscalls", t->syscalls}, {"samples", t->samples}});
    switches += t->switches;
    preempted += t->preempted;
    blocked += t->blocked;
    off_cpu += t->off_cpu_ns;
    tarr.push_back(std::move(tj));
  }
  j["threads"] = std::move(tarr);
  j["switches"] = {{"switches", switches}, {"preempted", preempted}, {"blocked", blocked}, {"off_cpu_ns", off_cpu}};

  // Faults by the function of the faulting instruction.
  json faults = {{"minor", k.minor_faults()}, {"major", k.major_faults()}};
  struct FaultFunction {
    std::string function, location;
    uint64_t minor = 0, major = 0;
  };
  std::vector<FaultFunction> by_function;
  std::unordered_map<std::string, size_t> index;
  for (const an::FaultSite& s : k.fault_sites()) {
    // A site in the kernel is the call that got it there: its ip is a
    // return address (after the syscall instruction), so looked up as one.
    const std::vector<an::Frame> frames = c.in.symbols->frames_at(s.image, s.ip, s.in_kernel());
    const an::Frame& f = frames.back();  // the function that owns the instruction
    const an::Frame& inner = frames.front();
    // The kernel's function too, where the trace names it ("_copy_to_iter
    // [kernel] under __GI___libc_read").
    std::string kernel = "[kernel]";
    if (s.in_kernel())
      if (const std::vector<an::Frame> named = c.in.symbols->frames_at(s.image, s.kernel_ip, false);
          !named.empty() && !named.front().function.empty())
        kernel = named.front().function;
    const std::string function = (s.in_kernel() ? kernel + " under " : "") + f.function_or_location();
    auto [it, inserted] = index.try_emplace(function, by_function.size());
    if (inserted) {
      by_function.push_back({function,
                             inner.file.empty() ? "" : an::base_name(inner.file) + ":" + std::to_string(inner.line)});
    }
    by_function[it->second].minor += s.minor;
    by_function[it->second].major += s.major;
  }
  std::stable_sort(by_function.begin(), by_function.end(), [](const FaultFunction& a, const FaultFunction& b) {
    return a.minor + a.major > b.minor + b.major;
  });
  json farr = json::array();
  for (size_t i = 0; i < by_function.size() && i < c.top; ++i)
    farr.push_back({{"function", by_function[i].function}, {"location", by_function[i].location},
                    {"minor", by_function[i].minor}, {"major", by_function[i].major}});
  faults["top_functions"] = std::move(farr);
  j["faults"] = std::move(faults);

  std::vector<an::SyscallStats> calls = k.syscalls();
  std::stable_sort(calls.begin(), calls.end(), [](const an::SyscallStats& a, const an::SyscallStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.count > b.count;
  });
  json sarr = json::array();
  for (const an::SyscallStats& s : calls)
    sarr.push_back({{"name", s.name}, {"nr", s.nr}, {"count", s.count}, {"errors", s.errors},
                    {"total_ns", s.total_ns}, {"max_ns", s.max_ns}});
  j["syscalls"] = std::move(sarr);
  // The kernel counts every call of a traced thread, the preloaded
  // library's own among them (its unwinder masks signals around each
  // lookup, it talks to the recorder, reads its modules): said beside the
  // table, as strace -c of the same program would count fewer.
  j["syscalls_include_preload"] =
      std::any_of(m.images.begin(), m.images.end(), [](const an::Image& im) { return im.started; });
  // Those made within its start are left out of the table, and said.
  const an::ShimSyscalls& shim = k.shim_syscalls();
  j["preload_start_syscalls"] = {{"count", shim.count}, {"total_ns", shim.total_ns}, {"starts", shim.starts}};

  const an::KernelUnwindSummary& u = m.kernel_unwind;
  const uint64_t samples = u.dwarf + u.frame_pointer + u.pc_only;
  json sj = {{"samples", samples}, {"source", "kernel"},
             {"unwound", {{"dwarf", u.dwarf}, {"frame_pointer", u.frame_pointer}, {"pc_only", u.pc_only},
                          {"frames", u.frames}}},
             {"in_kernel", u.in_kernel}};
  json stops = json::array();
  for (const auto& [reason, n] : u.stops) stops.push_back({{"reason", reason}, {"count", n}});
  sj["stops"] = std::move(stops);
  sj["stack_copy_short"] = u.stack_copy_short;
  sj["largest_stack_copy"] = u.largest_stack_copy;
  json unwind_problems = json::array();
  for (const auto& [module, message] : u.module_problems)
    unwind_problems.push_back({{"module", module}, {"message", message}});
  sj["unwind_problems"] = std::move(unwind_problems);
  // What one sample stands for: the sampler's rate (Session, absent from
  // older traces) is per second of a thread's time on the CPU.
  const an::KernelSessionInfo& session = k.session();
  sj["sample_hz_recorded"] = session.recorded;
  sj["sample_hz"] = session.sample_hz;
  sj["sample_event"] = session.sample_event;
  if (session.sample_hz != 0) {
    sj["period_ns"] = 1'000'000'000 / session.sample_hz;
    sj["cpu_ms"] = static_cast<double>(samples) * 1e3 / static_cast<double>(session.sample_hz);
  }
  if (c.in.kernel_cpu != nullptr && c.in.kernel_cpu->periods() > 0) {
    const an::CpuProfile all = c.in.kernel_cpu->profile(*c.in.symbols);
    sj["periods"] = all.periods;
    profile_into(c, *c.in.kernel_cpu, all, sj);
  }
  j["cpu"] = std::move(sj);
  json lost = json::array();
  for (const auto& [source, n] : k.lost()) lost.push_back({{"source", source}, {"count", n}});
  j["lost"] = std::move(lost);
  j["sources"] = session.sources;
  if (c.in.sched != nullptr && c.in.sched->any()) j["sched"] = sched_json(m, *c.in.sched, c.top);
  if (c.in.block != nullptr && c.in.block->any() && c.in.sched != nullptr)
    j["block"] = block_json(m, *c.in.block, *c.in.sched, c.top);
  return j;
}


// --- custom events ----------------------------------------------------------

json events_json(const Context& c) {
  json j;
  json counts = json::array();
  for (const an::CustomEventCount& e : c.in.custom->counts())
    counts.push_back({{"provider", e.provider}, {"event", e.event}, {"count", e.count}});
  j["counts"] = std::move(counts);
  json acts = json::array();
  for (const an::ActivityDurations& a : c.in.custom->activities())
    acts.push_back({{"provider", a.provider}, {"kind", a.kind},       {"count", a.count},
                    {"min_ns", a.min_ns},     {"median_ns", a.median_ns}, {"p99_ns", a.p99_ns},
                    {"max_ns", a.max_ns},     {"total_ns", a.total_ns}});
  j["activities"] = std::move(acts);
  j["unmatched_starts"] = c.in.custom->unmatched_starts();
  j["unmatched_stops"] = c.in.custom->unmatched_stops();
  return j;
}

// --- health -----------------------------------------------------------------

json health_json(const Context& c) {
  const an::TraceHealth& h = c.model().health;
  json j;
  j["lost_events"] = h.lost_events;
  json streams = json::array();
  bool unended = false;
  for (const reader::StreamStats& s : h.streams) {
    if (!s.ended) unended = true;
    if (s.lost == 0 && s.ended && s.missing_packets == 0) continue;
    streams.push_back({{"stream", s.stream_id}, {"pid", s.pid},       {"cpu", s.cpu},
                       {"lost", s.lost},        {"ended", s.ended},   {"missing_packets", s.missing_packets}});
  }
  j["streams"] = std::move(streams);
  j["finished"] = !unended && !h.streams.empty();
  json damage = json::array();
  for (const reader::Damage& d : h.damage) damage.push_back({{"offset", d.offset}, {"message", d.message}});
  j["damage"] = std::move(damage);
  j["warnings"] = h.warnings;
  json problems = json::array();
  // Each process's copy of a module is a module of its own to the
  // symbolizer: one line per file and problem is enough.
  std::vector<std::pair<std::string, std::string>> seen;
  for (const symbolizer::ModuleProblem& p : c.in.symbols->problems()) {
    std::pair<std::string, std::string> key{p.path, p.message};
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    problems.push_back({{"module", p.path}, {"message", p.message}});
  }
  j["symbol_problems"] = std::move(problems);
  // Kernel records lost (counted in their stream's lost events too), by
  // which perf event dropped them.
  json kernel_lost = json::array();
  if (c.in.kernel != nullptr)
    for (const auto& [source, n] : c.in.kernel->lost()) kernel_lost.push_back({{"source", source}, {"count", n}});
  j["kernel_lost"] = std::move(kernel_lost);
  // What tracing cost each traced image at its start (the preloaded
  // library's constructor, or a fork child's joining): the part of
  // tracing's cost a program of many short processes feels most.
  std::vector<int64_t> starts;
  for (const an::Image& image : c.model().images)
    if (image.shim_start_ns >= 0) starts.push_back(image.shim_start_ns);
  if (!starts.empty()) {
    std::sort(starts.begin(), starts.end());
    int64_t total = 0;
    for (const int64_t ns : starts) total += ns;
    j["preload_start"] = {{"images", starts.size()},
                          {"total_ns", total},
                          // The lower middle of an even count, as the activity tables take it.
                          {"median_ns", starts[(starts.size() - 1) / 2]},
                          {"max_ns", starts.back()}};
  }
  return j;
}

}  // namespace

ReportSections sections_with_data(const ReportInputs& in) {
  ReportSections s;
  s.heap = !in.heap->profiles().empty();
  const an::IoTotals& io = in.io->totals();
  s.io = io.opens + io.reads + io.writes + io.other > 0;
  s.cpu = in.cpu->periods() > 0;
  for (const an::ProcessInfo& p : in.model->processes) s.threads = s.threads || (!p.recorder && p.events > 0);
  s.events = !in.custom->counts().empty();
  s.kernel = in.kernel != nullptr && in.kernel->any();
  return s;
}

json build_report(const ReportInputs& in, const ReportSections& sections, size_t top) {
  const Context c{in, top, in.model->first_ns, sections.for_text};
  json j;
  const an::TraceModel& m = *in.model;
  size_t processes = 0, threads = 0;
  for (const an::ProcessInfo& p : m.processes)
    if (!p.recorder) {
      ++processes;
      threads += distinct_threads(m, p);
    }
  j["trace"] = {{"path", in.path},        {"file_size", in.trace->file_size()}, {"events", m.events},
                {"start_ns", m.first_ns}, {"duration_ns", m.last_ns - m.first_ns},
                {"processes", processes}, {"threads", threads}};
  if (!in.only_pids.empty()) j["trace"]["only_pids"] = in.only_pids;
  // Streams without their end then mean "not yet", not a recording cut short.
  if (in.live_recorder != 0) j["trace"]["recorder_running"] = in.live_recorder;
  if (sections.threads) j["processes"] = processes_json(c);
  if (sections.heap) j["heap"] = heap_json(c);
  if (sections.io) j["io"] = io_json(c);
  if (sections.cpu) j["cpu"] = cpu_json(c);
  if (sections.events) j["events"] = events_json(c);
  if (sections.kernel && in.kernel != nullptr) j["kernel"] = kernel_json(c);
  j["health"] = health_json(c);  // last: symbol problems are known once stacks are symbolized
  return j;
}

}  // namespace spoor::cli
