// spoor dump: every event of a trace, in time order, as text, JSON lines or CSV.
#include <algorithm>
#include <cstdio>
#include <variant>

#include "args.h"
#include "command.h"
#include "event_json.h"
#include "event_text.h"
#include "spoor/reader/event_reader.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

constexpr OptionSpec kOptions[] = {{"--format", true}, {"--pid", true}};

// The process an event is about: a kernel record's `pid` field (the
// recorder's stream writes them for every traced process), else the
// stream's process.
uint32_t process_of(const reader::Event& e) {
  if (e.provider != nullptr && e.provider->name == "Spoor.Kernel")
    if (const reader::Value* pid = e.field("pid"); pid != nullptr && std::holds_alternative<uint64_t>(*pid))
      return static_cast<uint32_t>(std::get<uint64_t>(*pid));
  return e.pid;
}

int run_dump(const std::vector<std::string>& words) {
  std::optional<Args> args = parse_args("dump", words, kOptions);
  if (!args) return kExitUsage;
  if (args->positional.empty()) return usage_error("dump", "missing FILE");
  if (args->positional.size() > 1)
    return usage_error("dump", "expects one FILE, got " + std::to_string(args->positional.size()));
  const std::optional<std::string> format_name = parse_format("dump", *args, {"text", "jsonl", "csv"});
  if (!format_name) return kExitUsage;
  const std::string& format = *format_name;

  const std::optional<std::vector<uint32_t>> pids = parse_pids("dump", *args);
  if (!pids) return kExitUsage;
  const std::vector<uint32_t>& only_pids = *pids;

  const std::string& path = args->positional[0];
  std::optional<reader::Trace> trace = open_trace(path);
  if (!trace) return kExitTrace;

  Output out;
  const TextLayout layout(*trace);
  if (format == "text") layout.header(out.buffer());
  if (format == "csv") csv_header(out.buffer());
  reader::EventReader events(*trace);
  reader::Event e;
  while (events.next(e)) {
    if (!only_pids.empty() && std::find(only_pids.begin(), only_pids.end(), process_of(e)) == only_pids.end()) continue;
    if (format == "text") layout.line(e, out.buffer());
    else if (format == "jsonl") json_line(e, out.buffer());
    else csv_line(e, out.buffer());
    out.maybe_flush();
  }
  out.flush();
  return report_damage(path, all_damage(*trace, events), events.events_read());
}

}  // namespace

const Command kDumpCommand = {
    "dump",
    "Print every event in time order",
    R"(usage: spoor dump FILE [--format text|jsonl|csv] [--pid PID[,PID...]]

Prints every event of the trace FILE ("-" reads standard input) in time
order (a merge of all streams):
timestamp (CLOCK_MONOTONIC ns), cpu, pid, tid, provider, event, opcode,
level, keywords (hex), activity id and related activity id (GUID text, empty
when absent), and the fields as name=value.

options:
  --format text   one aligned line per event, with a header line (default);
                  a blob over 64 bytes shows its first 64 and its size
  --format jsonl  one JSON object per line; "fields" is an object of typed
                  values (integers and floats as numbers, blobs as hex
                  strings, pointers as "0x..." strings, stacks and
                  callchains as arrays of them)
  --format csv    a header row, then one row per event; the fields are one
                  column, "name=value;name=value"
  --pid LIST      only the events of these processes (comma-separated IDs):
                  their streams' events, and the kernel's records about them

exit status: 0 when the whole trace was read; 1 when it cannot be read or is
damaged (everything before the damage is printed first, then the damage on
stderr); 2 for a usage error.
)",
    run_dump,
};

}  // namespace spoor::cli
