// spoor export: a trace in another tool's format (Perfetto, Chrome JSON,
// pprof, folded stacks). The trace becomes the writers' plain structs
// (export_model_from_trace.h); each writer lives in symbolizer/export/.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "args.h"
#include "command.h"
#include "export_model_from_trace.h"
#include "spoor/export/chrome_json.h"
#include "spoor/export/folded.h"
#include "spoor/export/perfetto.h"
#include "spoor/export/pprof.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

constexpr OptionSpec kOptions[] = {{"--format", true}, {"-o", true},        {"--output", true},
                                   {"--weight", true}, {"--sample-hz", true}, {"--debug-dir", true},
                                   {"--no-inline", false}, {"--pid", true}};

// Writes all of `bytes` to `path` ("-" is standard output). Prints why not
// and returns false when it cannot.
bool write_output(const std::string& path, const std::string& bytes) {
  const bool to_stdout = path == "-";
  FILE* f = to_stdout ? stdout : std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "spoor export: cannot write '%s': %s; choose another path with -o\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int err = ok ? 0 : errno;
  if (to_stdout) {
    ok = std::fflush(f) == 0 && ok;
  } else if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) std::fprintf(stderr, "spoor export: writing '%s' failed: %s\n", path.c_str(), std::strerror(err ? err : EIO));
  return ok;
}

int run_export(const std::vector<std::string>& words) {
  std::optional<Args> args = parse_args("export", words, kOptions);
  if (!args) return kExitUsage;
  if (args->positional.size() != 1)
    return usage_error("export", args->positional.empty() ? "missing FILE"
                                                          : "expects one FILE, got " + std::to_string(args->positional.size()));
  const std::string* format = args->option("--format");
  if (format == nullptr) return usage_error("export", "missing --format (perfetto, chrome, pprof or folded)");
  if (*format != "perfetto" && *format != "chrome" && *format != "pprof" && *format != "folded")
    return usage_error("export", "--format must be perfetto, chrome, pprof or folded, not '" + *format + "'");

  std::optional<exporter::FoldedWeight> weight = exporter::FoldedWeight::kSamples;
  if (const std::string* w = args->option("--weight")) {
    if (*format != "folded") return usage_error("export", "--weight applies to --format folded only");
    weight = exporter::folded_weight_from_name(*w);
    if (!weight)
      return usage_error("export", "--weight must be samples, alloc-bytes, alloc-calls or leaked-bytes, not '" + *w + "'");
  }
  std::optional<int64_t> sample_hz;  // nullopt: the rate the trace records
  if (const std::string* hz = args->option("--sample-hz")) {
    char* end = nullptr;
    sample_hz = std::strtoll(hz->c_str(), &end, 10);
    if (hz->empty() || *end != '\0' || *sample_hz <= 0 || *sample_hz > 1'000'000'000)
      return usage_error("export", "--sample-hz takes a rate in Hz (1 to 1000000000), not '" + *hz + "'");
  }
  std::string output = "-";
  if (const std::string* o = args->option("-o")) output = *o;
  if (const std::string* o = args->option("--output")) output = *o;

  symbolizer::Options options;
  if (const std::string* dir = args->option("--debug-dir")) options.debug_dirs.push_back(*dir);
  options.inline_frames = args->option("--no-inline") == nullptr;

  const std::optional<std::vector<uint32_t>> pids = parse_pids("export", *args);
  if (!pids) return kExitUsage;
  const std::vector<uint32_t>& only_pids = *pids;

  const std::string& path = args->positional[0];
  std::optional<reader::Trace> trace = open_trace(path);
  if (!trace) return kExitTrace;
  const ExportInput in = export_model_from_trace(*trace, std::move(options), sample_hz, only_pids);
  for (const uint32_t pid : only_pids)
    if (std::none_of(in.model.processes.begin(), in.model.processes.end(), [pid](const auto& p) { return p.pid == pid; }))
      return unknown_pid_error("export", pid);
  std::set<std::pair<std::string, std::string>> said;  // a module of several processes, once
  for (const symbolizer::ModuleProblem& p : in.problems)
    if (said.insert({p.path, p.message}).second)
      std::fprintf(stderr, "spoor export: %s: %s\n", p.path.c_str(), p.message.c_str());

  std::string bytes;
  if (*format == "perfetto") {
    bytes = exporter::perfetto_trace(in.model);
  } else if (*format == "chrome") {
    bytes = exporter::chrome_trace_json(in.model);
  } else if (*format == "folded") {
    bytes = exporter::folded_stacks(in.model, *weight);
  } else {
    std::optional<std::string> gz = exporter::pprof_profile(in.model);
    if (!gz) {
      std::fprintf(stderr, "spoor export: gzip compression of the profile failed (out of memory?)\n");
      return kExitTrace;
    }
    bytes = std::move(*gz);
  }
  if (!write_output(output, bytes)) return kExitTrace;
  // A damaged trace is exported as far as it reads, and says so.
  return report_damage(path, in.health.damage, in.events);
}

}  // namespace

const Command kExportCommand = {
    "export",
    "Convert a trace for Perfetto, chrome://tracing, pprof or flame graphs",
    R"(usage: spoor export FILE --format perfetto|chrome|pprof|folded [-o OUT] [--pid PID[,PID...]] [options]

Writes the trace FILE ("-" reads standard input) in another tool's format, to
OUT (default: standard output).

formats:
  perfetto  Perfetto's protobuf trace (ui.perfetto.dev, trace_processor):
            a track per process and thread, I/O calls and start/stop
            activities as slices, fork/exec and other events as instants,
            the heap size as a counter, CPU samples with their callstacks
  chrome    Chrome's Trace Event JSON (chrome://tracing, Perfetto): the same
            slices, instants and counter; no CPU samples
  pprof     gzipped profile.proto (go tool pprof, speedscope): per stack,
            samples/count, cpu/nanoseconds, alloc_objects/count,
            alloc_space/bytes, inuse_objects/count, inuse_space/bytes
            (what was never freed)
  folded    collapsed stacks, "main;f;g 123" (flamegraph.pl, inferno,
            speedscope)

options:
  -o, --output OUT     where to write ("-": standard output)
  --weight W           folded only: samples (default), alloc-bytes,
                       alloc-calls or leaked-bytes
  --sample-hz N        the rate spoor record sampled at, for CPU time in
                       pprof (default: the rate the trace records, else 1000)
  --debug-dir DIR      look for debug files in DIR first
  --no-inline          one frame per address, without inlined functions
  --pid LIST           only these processes (comma-separated IDs): their
                       tracks, events, samples and allocations

exit status: 0 when the whole trace was read and written; 1 when the trace
cannot be read or is damaged (what was recovered is still written) or OUT
cannot be written; 2 for a usage error.
)",
    run_export,
};

}  // namespace spoor::cli
