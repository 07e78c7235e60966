// spoor dump: every event of a trace, in time order, as text, JSON lines or
// CSV; with --follow (dump_follow.h), those of a recording still being
// written, as they reach its file or pipe.
#include <unistd.h>

#include <cstdio>

#include "args.h"
#include "command.h"
#include "dump_follow.h"
#include "event_lines.h"
#include "event_text.h"
#include "spoor/reader/event_reader.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

constexpr OptionSpec kOptions[] = {{"--format", true}, {"--pid", true}, {"--follow", false}};

int dump_whole(const std::string& path, const EventLines& lines) {
  std::optional<reader::Trace> trace = open_trace(path);
  if (!trace) return kExitTrace;
  Output out;
  const TextLayout layout(*trace);
  lines.header(layout, out.buffer());
  reader::EventReader events(*trace);
  reader::Event e;
  while (events.next(e)) {
    lines.line(layout, e, out.buffer());
    out.maybe_flush();
  }
  out.flush();
  return report_damage(path, all_damage(*trace, events), events.events_read());
}

int run_dump(const std::vector<std::string>& words) {
  std::optional<Args> args = parse_args("dump", words, kOptions);
  if (!args) return kExitUsage;
  if (args->positional.empty()) return usage_error("dump", "missing FILE");
  if (args->positional.size() > 1)
    return usage_error("dump", "expects one FILE, got " + std::to_string(args->positional.size()));
  const std::optional<std::string> format_name = parse_format("dump", *args, {"text", "jsonl", "csv"});
  if (!format_name) return kExitUsage;
  const std::optional<std::vector<uint32_t>> pids = parse_pids("dump", *args);
  if (!pids) return kExitUsage;
  const EventLines lines(*format_name, *pids);
  const std::string& path = args->positional[0];
  if (args->option("--follow") == nullptr) return dump_whole(path, lines);
  return path == "-" ? follow_pipe(STDIN_FILENO, lines) : follow_file(path, lines);
}

}  // namespace

const Command kDumpCommand = {
    "dump",
    "Print every event in time order",
    R"(usage: spoor dump FILE [--format text|jsonl|csv] [--pid PID[,PID...]] [--follow]

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
  --follow        a recording still being written (spoor record -o FILE in
                  another terminal, or spoor record -o - ... | spoor dump
                  --follow -): prints the events as they reach the file or
                  pipe, about every 250 ms, and ends when the recording
                  does (or its recorder is gone, status 1). Each batch is in time order; an event can come
                  after later ones of other threads, by up to that 250 ms.
                  Times use the clock calibration the file has so far: the
                  finished file may place them a few microseconds apart

exit status: 0 when the whole trace was read; 1 when it cannot be read or is
damaged (everything before the damage is printed first, then the damage on
stderr); 2 for a usage error.
)",
    run_dump,
};

}  // namespace spoor::cli
