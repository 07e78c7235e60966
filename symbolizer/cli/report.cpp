// spoor report: what a trace says about its program, in one read: the
// process tree, heap, file I/O, CPU samples, the program's own events, and
// how complete the trace is.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "args.h"
#include "command.h"
#include "live_recorder.h"
#include "report_data.h"
#include "report_text.h"
#include "spoor/analysis/load.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

namespace an = spoor::analysis;

constexpr OptionSpec kOptions[] = {{"--format", true},  {"--heap", false},      {"--io", false},
                                   {"--cpu", false},    {"--threads", false},   {"--events", false},
                                   {"--kernel", false}, {"--top", true},     {"--debug-dir", true},  {"--sysroot", true},
                                   {"--pid", true}};

std::vector<std::string> split_dirs(const std::string& s) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= s.size()) {
    const size_t end = std::min(s.find(':', begin), s.size());
    if (end > begin) out.push_back(s.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

int run_report(const std::vector<std::string>& words) {
  std::optional<Args> args = parse_args("report", words, kOptions);
  if (!args) return kExitUsage;
  if (args->positional.empty()) return usage_error("report", "missing FILE");
  if (args->positional.size() > 1)
    return usage_error("report", "expects one FILE, got " + std::to_string(args->positional.size()));
  const std::optional<std::string> format_name = parse_format("report", *args, {"text", "json"});
  if (!format_name) return kExitUsage;
  const std::string& format = *format_name;
  const std::optional<size_t> top_rows = parse_top("report", *args);
  if (!top_rows) return kExitUsage;
  const size_t top = *top_rows;
  const std::optional<std::vector<uint32_t>> pids = parse_pids("report", *args);
  if (!pids) return kExitUsage;
  const std::vector<uint32_t>& only_pids = *pids;
  symbolizer::Options symbols;
  if (const std::string* d = args->option("--debug-dir")) symbols.debug_dirs = split_dirs(*d);
  if (const std::string* s = args->option("--sysroot")) symbols.sysroot = *s;

  const std::string& path = args->positional[0];
  std::optional<reader::Trace> trace = open_trace(path);
  if (!trace) return kExitTrace;

  an::HeapAnalysis heap;
  an::IoAnalysis io(trace->clock(), 100);
  an::CpuAnalysis cpu;
  an::CustomEventAnalysis custom;
  an::KernelAnalysis kernel;
  an::CpuAnalysis kernel_cpu(an::SampleSource::kernel);
  an::SchedAnalysis sched;
  an::BlockAnalysis block;
  an::EventVisitor* const visitors[] = {&heap, &io, &cpu, &custom, &kernel, &kernel_cpu, &sched, &block};
  an::LoadOptions load_options;
  load_options.debug_dirs = symbols.debug_dirs;
  load_options.sysroot = symbols.sysroot;
  load_options.only_pids = only_pids;
  const an::TraceModel model = an::load_trace(*trace, visitors, load_options);
  for (const uint32_t pid : only_pids)
    if (std::none_of(model.processes.begin(), model.processes.end(), [pid](const an::ProcessInfo& p) { return p.pid == pid; }))
      return unknown_pid_error("report", pid);
  an::SymbolizedStacks stacks(model, symbols);

  ReportInputs in;
  in.path = path;
  in.trace = &*trace;
  in.model = &model;
  in.heap = &heap;
  in.io = &io;
  in.cpu = &cpu;
  in.custom = &custom;
  in.kernel = &kernel;
  in.kernel_cpu = &kernel_cpu;
  in.sched = &sched;
  in.block = &block;
  in.symbols = &stacks;
  in.only_pids = only_pids;
  in.live_recorder = live_recorder(*trace, path);
  ReportSections sections;
  sections.heap = args->option("--heap") != nullptr;
  sections.io = args->option("--io") != nullptr;
  sections.cpu = args->option("--cpu") != nullptr;
  sections.threads = args->option("--threads") != nullptr;
  sections.events = args->option("--events") != nullptr;
  sections.kernel = args->option("--kernel") != nullptr;
  if (!(sections.heap || sections.io || sections.cpu || sections.threads || sections.events || sections.kernel))
    sections = sections_with_data(in);
  sections.for_text = format != "json";
  const nlohmann::json report = build_report(in, sections, top);

  Output out;
  if (format == "json") out.buffer() = report.dump(2) + "\n";
  else print_report_text(report, out.buffer());
  out.flush();
  // Damage: the report above covers what came before it; say so and exit 1.
  uint64_t events = model.events;
  return report_damage(path, model.health.damage, events);
}

}  // namespace

const Command kReportCommand = {
    "report",
    "Report heap, I/O, CPU, threads, program and kernel events of a trace",
    R"(usage: spoor report FILE [--heap] [--io] [--cpu] [--threads] [--events] [--kernel]
                    [--format text|json] [--top N] [--pid PID[,PID...]]
                    [--debug-dir DIR[:DIR...]] [--sysroot DIR]

Reads the trace FILE ("-" reads standard input) once and reports, per
section (all that have data when none is chosen):

  --threads  the process tree: command lines, start, duration, how each
             process ended (exit code or signal), execs; each process's
             threads with their names and lifetimes
  --heap     per program image (a process that execs has one per exec):
             peak heap (bytes live) and when, total allocated, calls
             (alloc, free, realloc), bytes live over time (a chart of up
             to 64 columns of equal time, each as high as the most bytes
             live in it), temporary allocations (freed before
             any other allocation), leaks (never freed) with their stacks,
             the top allocating functions (the sites merged by the function
             that called the allocator, however it was reached: STACKS says
             how many stacks each merges; the program's own function above
             the C++ or Rust library's frames and the allocator wrappers,
             such as xmalloc, g_malloc or CRYPTO_zalloc, told by their
             names), the top allocation sites (whole
             stacks) by bytes, by calls and by bytes live at the peak, and
             a histogram of allocation sizes; blocks live at an exec are
             "released by exec", not leaks; a fork child's blocks inherited
             from its parent are counted apart
  --io       per file (the path it was opened with; pipes and sockets by
             their kernel object or address; stdio streams with no
             descriptor by the function that made them, as in "memory
             stream: open_memstream"): opens, reads, writes, bytes each
             way, failed calls, time in the calls; per thread; the slowest
             calls; the bytes read and written over time (a chart each,
             from the first call that moved a byte to the last)
  --cpu      from the preload's CPU samples: top functions by self and
             inclusive time, overall and per thread
  --kernel   from the kernel's records (spoor record --kernel): per thread,
             context switches (blocked or preempted) and time off the CPU,
             page faults (minor, major) and the functions they hit, system
             calls (count, errors, total and longest time), the kernel's
             CPU samples unwound offline as a profile of their own (with
             the CPU time one sample stands for, and the modules the
             unwinder could not use), and the kernel records lost; with
             --kernel=sched, per thread its time off the CPU by why
             (runnable, sleeping, disk sleep), who woke it and what ran
             while it waited to run; with --kernel=block, block requests,
             bytes and latency per device and per issuing task
  --events   events of the program's own providers: counts per event, and
             start/stop activity durations (count, min, median, p99, max)

It always ends with the trace's health: events lost per stream, damage,
and the modules whose symbols were not found, with what to install.

options:
  --format text   aligned tables for reading (default); sizes in B/KiB/MiB,
                  times in ms from the first event
  --format json   one JSON document for scripts: sizes in bytes, times in ns
  --top N         rows per ranking (default 10)
  --debug-dir D   where to look for separate debug info first (colon-
                  separated directories; the defaults follow)
  --sysroot DIR   prefix for the module paths of the trace (a trace
                  recorded on another machine, its files copied under DIR)
  --pid LIST      count only the events of these processes (comma-
                  separated IDs, as --threads lists them) in the heap, I/O,
                  CPU, event and kernel sections; the process table stays
                  whole. What a process got from a parent left out (a fork
                  child's descriptors and live blocks) is then unknown

A module gone or changed since the recording is looked for by the build ID
the trace recorded, in the .build-id trees of --debug-dir and
/usr/lib/debug; with DEBUGINFOD_URLS set (https://debuginfod.debian.net
for Debian's packages), modules and debug info missing here are fetched
from those debuginfod servers.

exit status: 0 when the whole trace was read; 1 when it cannot be read or is
damaged (the report covers the events before the damage and says where it
stopped, on stderr too); 2 for a usage error.
)",
    run_report,
};

}  // namespace spoor::cli
