#include "export_model_from_trace.h"

#include <algorithm>

#include <map>
#include <tuple>
#include <unordered_map>

#include "event_text.h"
#include "export_events.h"
#include "spoor/analysis/cpu.h"
#include "spoor/analysis/heap.h"
#include "spoor/analysis/kernel.h"
#include "spoor/analysis/kernel_block.h"
#include "spoor/analysis/kernel_sched.h"
#include "spoor/analysis/load.h"
#include "spoor/analysis/symbolized_stacks.h"

namespace spoor::cli {
namespace {

using analysis::StackKey;
using analysis::StackUse;

// Builds the model's module, location and stack tables from symbolized stacks.
class StackTables {
 public:
  StackTables(const analysis::TraceModel& tm, analysis::SymbolizedStacks& stacks, exporter::ExportModel& out)
      : tm_(tm), stacks_(stacks), out_(out) {}

  uint32_t stack(StackKey key, StackUse use) {
    auto [it, added] = ids_.try_emplace({key, use}, static_cast<uint32_t>(out_.stacks.size()));
    if (!added) return it->second;
    out_.stacks.emplace_back();
    // Not kept by the symbolizer too: the locations below are what stays.
    const std::vector<analysis::Frame> frames = stacks_.frames_not_kept(key, use);
    std::vector<uint32_t> locations;
    // A location is a run of inlined frames and the frame they were inlined
    // into: all at one address.
    for (size_t i = 0; i < frames.size();) {
      size_t j = i;
      while (j + 1 < frames.size() && frames[j].inlined) ++j;
      // The first frame of a sample is the pc, every other a return address:
      // the same number names other code, so it is another location.
      const bool pc = use == StackUse::sample && i == 0;
      locations.push_back(location(key, frames, i, j, pc));
      i = j + 1;
    }
    out_.stacks[it->second].locations = std::move(locations);
    return it->second;
  }

 private:
  uint32_t location(StackKey key, const std::vector<analysis::Frame>& frames, size_t first, size_t last, bool pc) {
    const uint64_t address = frames[last].address;
    const uint32_t mod = module(key, address);
    auto [it, added] = location_ids_.try_emplace({mod, address, pc}, static_cast<uint32_t>(out_.locations.size()));
    if (!added) return it->second;
    exporter::Location l{.module = mod, .address = address, .frames = {}};
    bool named = false;
    for (size_t k = first; k <= last; ++k) {
      named |= !frames[k].function.empty();
      l.frames.push_back({.function = frames[k].function, .file = frames[k].file, .line = frames[k].line});
    }
    if (!named) {
      l.frames.clear();  // shown as module+0xoffset, or under its function's start (one box per function)
      if (frames[last].has_code_start) l.frames.push_back({.function = frames[last].function_or_location(), .file = {}, .line = 0});
    }
    out_.locations.push_back(std::move(l));
    return it->second;
  }

  uint32_t module(StackKey key, uint64_t address) {
    const analysis::Module* m = tm_.module_of(key, address);
    if (m == nullptr) return exporter::kNoModule;
    auto [it, added] = module_ids_.try_emplace(m, static_cast<uint32_t>(out_.modules.size()));
    if (added) {
      static const char* digits = "0123456789abcdef";
      std::string build_id;
      for (uint8_t b : m->build_id) build_id += {digits[b >> 4], digits[b & 15]};
      out_.modules.push_back({.pid = tm_.images[analysis::stack_image(key)].pid,
                              .path = m->path,
                              .build_id = build_id,
                              .start = m->start,
                              .limit = m->start + m->size,
                              .bias = m->bias});
    }
    return it->second;
  }

  const analysis::TraceModel& tm_;
  analysis::SymbolizedStacks& stacks_;
  exporter::ExportModel& out_;
  std::map<std::pair<StackKey, StackUse>, uint32_t> ids_;
  std::map<std::tuple<uint32_t, uint64_t, bool>, uint32_t> location_ids_;
  std::unordered_map<const analysis::Module*, uint32_t> module_ids_;
};

// What the kernel says about each thread on its timeline: where it was off
// the CPU (from switch-out to switch-in), its system calls, its page faults.
// With the scheduler's records (--kernel=sched), the off-CPU slices say why
// (sleeping, disk sleep, runnable) instead, each wakeup is an instant on
// the woken thread naming its waker and, when the waker is traced, a flow
// from the waker at the wakeup to the woken thread's next run, and block
// requests are slices on the traced thread that issued them.
void add_kernel_events(const analysis::TraceModel& tm, const analysis::KernelAnalysis& kernel,
                       const analysis::SchedAnalysis& sched, const analysis::BlockAnalysis& block,
                       exporter::ExportModel& m) {
  auto thread = [&](analysis::ThreadIndex t) -> const analysis::ThreadInfo& { return tm.threads[t]; };
  using Args = std::vector<std::pair<std::string, std::string>>;
  // A slice on a traced thread's track; an end before the begin (the
  // records that bound it came apart) makes it zero-length.
  auto slice = [&](const analysis::ThreadInfo& t, int64_t begin_ns, int64_t end_ns, std::string name,
                   const char* category, Args args = {}) {
    m.slices.push_back({.pid = t.pid,
                        .tid = t.tid,
                        .begin_ns = begin_ns,
                        .end_ns = std::max(end_ns, begin_ns),
                        .name = std::move(name),
                        .category = category,
                        .args = std::move(args)});
  };
  for (const analysis::SchedOffCpu& o : sched.off_cpu())
    slice(thread(o.thread), o.start_ns, o.end_ns,
          std::string("off-CPU (") + analysis::off_cpu_reason_name(o.reason) + ")", "sched");
  auto task = [&](uint32_t tid) {
    const std::string_view comm = sched.comm(tid);
    return (comm.empty() ? std::string("?") : std::string(comm)) + " (" + std::to_string(tid) + ")";
  };
  for (const analysis::Wakeup& w : sched.wakeups()) {
    const analysis::ThreadInfo& t = thread(w.thread);
    m.instants.push_back(
        {.pid = t.pid, .tid = t.tid, .time_ns = w.woken_ns, .name = "woken by " + task(w.waker), .category = "sched"});
    // A traced waker: an arrow from a mark on its track at the wakeup to a
    // mark on the woken thread's where it then ran (zero-length slices: a
    // flow binds to slices, and these nest in whatever runs there).
    const analysis::ThreadIndex waker =
        w.waker == analysis::kInterruptWaker ? analysis::kNone : sched.traced(w.waker);
    if (waker == analysis::kNone || w.run_ns < w.woken_ns) continue;
    const auto from_slice = static_cast<uint32_t>(m.slices.size());
    slice(thread(waker), w.woken_ns, w.woken_ns, "wakes " + task(t.tid), "sched");
    slice(t, w.run_ns, w.run_ns, "runs, woken by " + task(w.waker), "sched",
          {{"waited to run", std::to_string(w.run_ns - w.woken_ns) + " ns"}});
    m.flows.push_back({.from = from_slice, .to = from_slice + 1});
  }
  for (const analysis::BlockRequestSpan& r : block.requests()) {
    const analysis::ThreadIndex ti = sched.traced(r.tid);
    if (ti == analysis::kNone) continue;
    slice(thread(ti), r.issue_ns, r.complete_ns, "block " + r.rwbs + " " + std::to_string(r.bytes) + " B", "block",
          {{"device", block.label(r.dev)}, {"sector", std::to_string(r.sector)}});
  }
  // The switches' off-CPU slices only when the scheduler's (which say why)
  // are not there: both cover the same intervals.
  static const std::vector<analysis::OffCpuInterval> kNoIntervals;
  for (const analysis::OffCpuInterval& o : sched.off_cpu().empty() ? kernel.off_cpu() : kNoIntervals)
    slice(thread(o.thread), o.start_ns, o.end_ns, o.preempted ? "off-CPU (preempted)" : "off-CPU (blocked)", "kernel");
  for (const analysis::SyscallInterval& s : kernel.syscall_intervals())
    slice(thread(s.thread), s.start_ns, s.end_ns, kernel.syscalls()[s.syscall].name, "syscall",
          {{"ret", std::to_string(s.ret)}});
  for (const analysis::PageFaultEvent& f : kernel.faults()) {
    const analysis::ThreadInfo& t = thread(f.thread);
    m.instants.push_back({.pid = t.pid,
                          .tid = t.tid,
                          .time_ns = f.time_ns,
                          .name = std::string(f.major ? "major" : "minor") + " page fault at " + hex_number(f.address),
                          .category = "kernel"});
  }
}

}  // namespace

ExportInput export_model_from_trace(const reader::Trace& trace, symbolizer::Options options,
                                    std::optional<int64_t> sample_hz, const std::vector<uint32_t>& only_pids) {
  ExportEvents events(trace);
  analysis::HeapAnalysis heap;
  analysis::KernelAnalysis kernel;
  analysis::SchedAnalysis sched;
  analysis::BlockAnalysis block;
  analysis::EventVisitor* visitors[] = {&events, &heap, &kernel, &sched, &block};
  analysis::LoadOptions load_options;
  load_options.debug_dirs = options.debug_dirs;
  load_options.sysroot = options.sysroot;
  load_options.only_pids = only_pids;
  const analysis::TraceModel tm = analysis::load_trace(trace, visitors, load_options);
  auto chosen = [&only_pids](uint32_t pid) {
    return only_pids.empty() || std::find(only_pids.begin(), only_pids.end(), pid) != only_pids.end();
  };

  ExportInput in;
  in.health = tm.health;
  in.events = tm.events;
  exporter::ExportModel& m = in.model;
  m.first_ns = tm.first_ns;
  m.last_ns = tm.last_ns;
  const int64_t hz = sample_hz ? *sample_hz : tm.sample_hz != 0 ? tm.sample_hz : analysis::kDefaultSampleHz;
  m.sample_period_ns = 1'000'000'000 / hz;

  for (const analysis::ProcessInfo& p : tm.processes) {
    if (p.recorder || !chosen(p.pid)) continue;
    std::string exe = p.images.empty() ? std::string() : tm.images[p.images.back()].exe;
    m.processes.push_back({.pid = p.pid, .name = p.name, .cmdline = p.command_line, .exe = std::move(exe)});
  }
  for (const analysis::ThreadInfo& t : tm.threads) {
    if (t.process != analysis::kNone && tm.processes[t.process].recorder) continue;
    if (!chosen(t.pid)) continue;
    m.threads.push_back({.pid = t.pid, .tid = t.tid, .name = t.name()});
  }

  m.slices = std::move(events.io_slices);
  for (const reader::ActivitySpan& a : events.finish_activities().spans)
    m.slices.push_back({.pid = a.pid,
                        .tid = a.tid,
                        .begin_ns = a.start_ns,
                        .end_ns = std::max(a.stop_ns, a.start_ns),
                        .name = a.kind,
                        .category = a.provider != nullptr ? a.provider->name : "",
                        .args = {}});
  m.instants = std::move(events.instants);
  add_kernel_events(tm, kernel, sched, block, m);
  if (!events.heap_size.empty())
    m.counters.push_back({.name = "heap size", .unit = "bytes", .values = std::move(events.heap_size)});

  analysis::SymbolizedStacks symbolized(tm, std::move(options));
  StackTables tables(tm, symbolized, m);
  // The kernel's samples when the trace has them (they carry the time in
  // system calls too, and stacks through code without frame pointers);
  // the preload sampler's otherwise.
  const bool kernel_samples = !events.kernel_samples.empty();
  // The kernel sampler's own rate when the trace says it (Session).
  if (kernel_samples && !sample_hz && kernel.session().sample_hz != 0)
    m.sample_period_ns = 1'000'000'000 / kernel.session().sample_hz;
  for (const SampleAt& s : kernel_samples ? events.kernel_samples : events.samples)
    m.cpu_samples.push_back({.pid = s.pid,
                             .tid = s.tid,
                             .time_ns = s.time_ns,
                             .stack = tables.stack(s.stack, StackUse::sample),
                             .periods = s.periods});
  // The heap as `spoor report` counts it: leaked = allocated by the image
  // and live at the process's end (not at an exec, which released it).
  for (const analysis::HeapProfile& p : heap.profiles())
    for (const analysis::HeapSite& site : p.sites)
      m.allocations.push_back({.stack = tables.stack(site.stack, StackUse::call),
                               .alloc_calls = site.calls,
                               .alloc_bytes = site.allocated_bytes,
                               .live_blocks = site.leaked_blocks,
                               .live_bytes = site.leaked_bytes});
  in.problems = symbolized.problems();
  return in;
}

}  // namespace spoor::cli
