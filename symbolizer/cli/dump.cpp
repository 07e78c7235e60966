// spoor dump: every event of a trace, in time order, as text, JSON lines or
// CSV; with --follow, the events of a recording still being written, as
// they reach its file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <unordered_map>
#include <variant>

#include "args.h"
#include "command.h"
#include "event_json.h"
#include "event_text.h"
#include "spoor/reader/event_reader.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

constexpr OptionSpec kOptions[] = {{"--format", true}, {"--pid", true}, {"--follow", false}};

// The process an event is about: a kernel record's `pid` field (the
// recorder's stream writes them for every traced process), else the
// stream's process.
uint32_t process_of(const reader::Event& e) {
  if (e.provider != nullptr && e.provider->name == "Spoor.Kernel")
    if (const reader::Value* pid = e.field("pid"); pid != nullptr && std::holds_alternative<uint64_t>(*pid))
      return static_cast<uint32_t>(std::get<uint64_t>(*pid));
  return e.pid;
}

// One event as a line of the chosen format, for the chosen processes.
class EventLines {
 public:
  EventLines(std::string format, std::vector<uint32_t> only_pids)
      : format_(std::move(format)), only_pids_(std::move(only_pids)) {}

  void header(const reader::Trace& trace, std::string& out) const {
    if (format_ == "text") TextLayout(trace).header(out);
    if (format_ == "csv") csv_header(out);
  }

  void line(const TextLayout& layout, const reader::Event& e, std::string& out) const {
    if (!only_pids_.empty() && std::find(only_pids_.begin(), only_pids_.end(), process_of(e)) == only_pids_.end())
      return;
    if (format_ == "text") layout.line(e, out);
    else if (format_ == "jsonl") json_line(e, out);
    else csv_line(e, out);
  }

 private:
  std::string format_;
  std::vector<uint32_t> only_pids_;
};

int dump_whole(const std::string& path, const EventLines& lines) {
  std::optional<reader::Trace> trace = open_trace(path);
  if (!trace) return kExitTrace;
  Output out;
  const TextLayout layout(*trace);
  lines.header(*trace, out.buffer());
  reader::EventReader events(*trace);
  reader::Event e;
  while (events.next(e)) {
    lines.line(layout, e, out.buffer());
    out.maybe_flush();
  }
  out.flush();
  return report_damage(path, all_damage(*trace, events), events.events_read());
}

// True once the recorder has finished the file: every stream it announced
// has its STREAM_END (the recorder ends its own stream last, after every
// traced process's).
bool recording_finished(const reader::Trace& trace) {
  if (trace.streams().empty() || trace.damage().has_value()) return false;
  return std::all_of(trace.streams().begin(), trace.streams().end(),
                     [](const reader::Stream& s) { return s.end.has_value(); });
}

// --follow: reads the file again as it grows and prints each stream's
// events past those printed before, as a real-time consumer takes buffers
// as a session flushes them. Each pass is in time order; across passes an
// event can come after later ones of other streams, by up to the
// recorder's flush (250 ms). A pass decodes the whole file again, so the
// wait between passes grows with the time a pass takes (at most a fifth of
// the time is spent reading).
int dump_following(const std::string& path, const EventLines& lines) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kShortestWait = std::chrono::milliseconds(200);
  std::unordered_map<uint32_t, uint64_t> printed;  // per stream: its first events, already printed
  bool header_printed = false;
  uint64_t last_size = 0;
  // `spoor record -o FILE ... & spoor dump --follow FILE` may start before
  // the recorder has made the file: wait a while for it.
  constexpr auto kWaitForTheFile = std::chrono::seconds(5);
  const auto start = Clock::now();
  for (;;) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec == std::errc::no_such_file_or_directory && last_size == 0 && Clock::now() - start < kWaitForTheFile) {
      std::this_thread::sleep_for(kShortestWait);
      continue;
    }
    if (ec) {
      std::fprintf(stderr, "spoor dump: cannot follow '%s': %s%s\n", path.c_str(), ec.message().c_str(),
                   last_size == 0 ? " (waited 5 s for a recording to make it)" : "");
      return kExitTrace;
    }
    if (size < last_size) {
      std::fprintf(stderr, "spoor dump: '%s' shrank from %llu to %llu bytes: another recording replaced it\n",
                   path.c_str(), static_cast<unsigned long long>(last_size), static_cast<unsigned long long>(size));
      return kExitTrace;
    }
    // A file shorter than its header is a recording that has just begun.
    if (size < 32 || size == last_size) {
      std::this_thread::sleep_for(kShortestWait);
      continue;
    }
    last_size = size;
    const auto pass_start = Clock::now();
    std::optional<reader::Trace> trace = open_trace(path);
    if (!trace) return kExitTrace;
    Output out;
    if (!header_printed) {
      lines.header(*trace, out.buffer());
      header_printed = true;
    }
    const TextLayout layout(*trace);
    std::unordered_map<uint32_t, uint64_t> seen;
    reader::EventReader events(*trace);
    reader::Event e;
    while (events.next(e)) {
      if (++seen[e.stream_id] <= printed[e.stream_id]) continue;
      lines.line(layout, e, out.buffer());
      out.maybe_flush();
    }
    out.flush();
    printed = std::move(seen);
    // A finished recording ends the following, as a whole dump would.
    if (recording_finished(*trace)) return report_damage(path, all_damage(*trace, events), events.events_read());
    const auto pass = Clock::now() - pass_start;
    std::this_thread::sleep_for(std::max<Clock::duration>(kShortestWait, 4 * pass));
  }
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
  if (path == "-")
    return usage_error("dump", "--follow reads a file as a recording writes it, not standard input");
  return dump_following(path, lines);
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
                  another terminal): prints the events as they reach the
                  file, about every 250 ms, and ends when the recording
                  does. Each batch is in time order; an event can come
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
