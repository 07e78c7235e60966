// spoor info: what a trace holds, in one page: file, clock, time span,
// processes, streams, event counts, losses, activity durations, damage.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "args.h"
#include "command.h"
#include "event_text.h"
#include "live_recorder.h"
#include "spoor/reader/activity.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/names.h"
#include "spoor/reader/stream_stats.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

using reader::Trace;

[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n > 0) out.append(buf, std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
}

using ull = unsigned long long;
using ll = long long;

// What one pass over the events gathers.
struct EventSummary {
  uint64_t events = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  std::unordered_map<const reader::EventDescriptor*, uint64_t> per_descriptor;
  reader::ActivityMatches activities;
};

void print_file(const std::string& path, const Trace& t, const EventSummary& s, std::string& out) {
  appendf(out, "trace      %s\n", path == "-" ? "(standard input)" : path.c_str());
  appendf(out, "size       %llu bytes\n", static_cast<ull>(t.file_size()));
  appendf(out, "format     %u.%u\n", t.version_major(), t.version_minor());
  const reader::CompressionSummary& z = t.compression();
  if (z.blocks > 0)
    appendf(out, "compressed %llu COMPRESSED blocks: %llu bytes hold %llu bytes of blocks (%.1fx)\n",
            static_cast<ull>(z.blocks), static_cast<ull>(z.stored_bytes),
            static_cast<ull>(z.raw_bytes),
            static_cast<double>(z.raw_bytes) / static_cast<double>(z.stored_bytes));
  const reader::Clock& c = t.clock();
  if (!t.has_clock()) {
    appendf(out, "clock      none (times are raw ticks)\n");
  } else {
    appendf(out, "clock      %s at %.3f MHz (tick %llu = %lld ns)\n",
            reader::clock_source_name(c.source).c_str(), static_cast<double>(c.freq_millihz) / 1e9,
            static_cast<ull>(c.tick_ref), static_cast<ll>(c.monotonic_ns_ref));
    // Said only when coarser than a tick: as any trace before format 1.7.
    if (c.time_grain_ticks > 1)
      appendf(out, "resolution events' times rounded down to %u ticks (%.1f ns)\n", c.time_grain_ticks,
              static_cast<double>(c.time_grain_ticks) * 1e12 / static_cast<double>(c.freq_millihz));
  }
  if (s.events == 0)
    appendf(out, "time span  no events\n");
  else
    appendf(out, "time span  %lld .. %lld ns (%s), %llu events\n", static_cast<ll>(s.first_ns),
            static_cast<ll>(s.last_ns), duration_text(static_cast<int64_t>(static_cast<uint64_t>(s.last_ns) -
                                                 static_cast<uint64_t>(s.first_ns)))
                .c_str(),
            static_cast<ull>(s.events));
}

void print_processes(const Trace& t, std::string& out) {
  appendf(out, "\nprocesses\n");
  if (t.processes().empty()) appendf(out, "  (none)\n");
  for (const reader::Process& p : t.processes()) {
    std::string cmd;
    for (const std::string& a : p.arguments) cmd += (cmd.empty() ? "" : " ") + a;
    appendf(out, "  pid %u (ppid %u, %u-bit) %s", p.pid, p.ppid, p.pointer_size * 8,
            p.name.c_str());
    out += cmd.empty() ? "\n" : ": " + cmd + "\n";
  }
  if (t.symbol_maps().empty()) return;
  appendf(out, "\nJIT symbol maps kept in the trace\n");
  for (const reader::SymbolMap& m : t.symbol_maps()) {
    const auto lines = std::count(m.text.begin(), m.text.end(), '\n');
    appendf(out, "  pid %u: %s, %lld line(s), %llu bytes\n", m.pid, m.path.c_str(), static_cast<ll>(lines),
            static_cast<ull>(m.text.size()));
  }
}

void print_streams(const std::vector<reader::StreamStats>& stats,
                   const reader::EventReader& events, std::string& out) {
  appendf(out, "\nstreams\n");
  if (stats.empty()) {
    appendf(out, "  (none)\n");
    return;
  }
  appendf(out, "  %8s %8s %5s %9s %11s %11s %s\n", "STREAM", "PID", "CPU", "PACKETS", "EVENTS",
          "LOST", "NOTES");
  for (const reader::StreamStats& s : stats) {
    std::string notes;
    if (s.missing_packets > 0)
      notes += std::to_string(s.missing_packets) + " packets missing in " +
               std::to_string(s.sequence_gaps) + " gaps; ";
    if (events.events_read(s.stream_id) != s.records)
      notes += std::to_string(s.records) + " records in packet headers; ";
    if (s.abandoned_bytes > 0) notes += std::to_string(s.abandoned_bytes) + " bytes abandoned; ";
    if (!s.ended) notes += "no STREAM_END; ";
    if (!notes.empty()) notes.resize(notes.size() - 2);
    appendf(out, "  %8u %8u %5u %9llu %11llu %11llu", s.stream_id, s.pid, s.cpu,
            static_cast<ull>(s.packets), static_cast<ull>(events.events_read(s.stream_id)),
            static_cast<ull>(s.lost));
    out += notes.empty() ? "\n" : " " + notes + "\n";
  }
}

void print_event_counts(const EventSummary& s, std::string& out) {
  appendf(out, "\nevents per provider\n");
  if (s.per_descriptor.empty()) appendf(out, "  (none)\n");
  // (provider name, ID) -> event name -> count, over every process: each
  // process describes its providers and events itself, under keys of its
  // own, but the same provider is one line. Names sort the output.
  std::map<std::pair<std::string, std::string>, std::map<std::string, uint64_t>> by_provider;
  for (const auto& [d, n] : s.per_descriptor) {
    // Start and stop events often share a name; the opcode tells them apart.
    std::string name = d->name;
    if (d->opcode != 0) name.append(" (").append(reader::opcode_name(d->opcode)).append(")");
    by_provider[{d->provider->name, d->provider->guid.to_string()}][name] += n;
  }
  for (const auto& [provider, counts] : by_provider) {
    uint64_t total = 0;
    size_t width = 5;
    for (const auto& [name, n] : counts) {
      total += n;
      width = std::max(width, name.size());
    }
    appendf(out, "  %s {%s}  %llu\n", provider.first.c_str(), provider.second.c_str(), static_cast<ull>(total));
    for (const auto& [name, n] : counts)
      appendf(out, "    %-*s %11llu\n", static_cast<int>(width), name.c_str(), static_cast<ull>(n));
  }
}

void print_losses(const std::vector<reader::StreamStats>& stats, std::string& out) {
  appendf(out, "\nlost events\n");
  bool any = false;
  for (const reader::StreamStats& s : stats) {
    if (s.lost == 0) continue;
    any = true;
    appendf(out, "  stream %u (pid %u, cpu %u): %llu lost\n", s.stream_id, s.pid, s.cpu,
            static_cast<ull>(s.lost));
    for (const reader::LossInterval& l : s.losses) {
      if (l.after_last_packet)
        appendf(out, "    %llu events lost on cpu %u after %lld ns (after the last packet)\n",
                static_cast<ull>(l.lost), l.cpu, static_cast<ll>(l.begin_ns));
      else
        appendf(out, "    %llu events lost on cpu %u between %lld and %lld ns\n",
                static_cast<ull>(l.lost), l.cpu, static_cast<ll>(l.begin_ns),
                static_cast<ll>(l.end_ns));
    }
  }
  if (!any) appendf(out, "  (none)\n");
}

void print_activities(const reader::ActivityMatches& m, std::string& out) {
  appendf(out, "\nactivities (start/stop)\n");
  const std::vector<reader::ActivitySummary> kinds = reader::summarize(m.spans, m.still_open);
  // The OPEN column only when something was: most traces close every
  // activity they start.
  const bool open = !m.still_open.empty();
  if (kinds.empty()) appendf(out, "  (none)\n");
  else
    appendf(out, "  %-32s %-24s %9s%s %12s %12s %12s\n", "PROVIDER", "KIND", "COUNT", open ? "      OPEN" : "",
            "MIN", "MEDIAN", "MAX");
  for (const reader::ActivitySummary& k : kinds) {
    appendf(out, "  %-32s %-24s %9llu", k.provider != nullptr ? k.provider->name.c_str() : "", k.kind.c_str(),
            static_cast<ull>(k.count));
    if (open) appendf(out, " %9llu", static_cast<ull>(k.still_open));
    const bool timed = k.count > 0;  // none stopped: no times
    appendf(out, " %12s %12s %12s\n", timed ? duration_text(k.min_ns).c_str() : "-",
            timed ? duration_text(k.median_ns).c_str() : "-", timed ? duration_text(k.max_ns).c_str() : "-");
  }
  if (open)
    appendf(out,
            "  OPEN: started and not stopped when the trace ended (for threads: still running when their\n"
            "  process exited or exec'd); COUNT and the times are of those that stopped\n");
  if (m.restarted() > 0 || m.unmatched_stops > 0)
    appendf(out, "  unmatched: %llu started again before stopping, %llu stops without a start\n",
            static_cast<ull>(m.restarted()), static_cast<ull>(m.unmatched_stops));
}

void print_problems(const Trace& t, const std::vector<reader::StreamStats>& stats,
                    const std::vector<reader::Damage>& damage, uint32_t live_recorder, std::string& out) {
  // A session ends its file with every stream's STREAM_END block; a stream
  // without one means the file stops early (cut, or the program died
  // before the session stopped), so its final lost count may be missing.
  std::string unended;
  for (const reader::StreamStats& s : stats)
    if (!s.ended) unended += (unended.empty() ? "" : ", ") + std::to_string(s.stream_id);
  const bool unfinished = !unended.empty() || stats.empty();
  if (!t.warnings().empty() || unfinished) {
    appendf(out, "\nwarnings\n");
    for (const std::string& w : t.warnings()) out += "  " + w + "\n";
    if (stats.empty())
      out += "  the recording did not finish: the file has no streams\n";
    else if (!unended.empty() && live_recorder != 0)
      out += "  still being recorded: spoor record (pid " + std::to_string(live_recorder) +
             ") is writing this file; stream " + unended + " has no STREAM_END block yet\n";
    else if (!unended.empty())
      out += "  the recording did not finish: stream " + unended +
             " has no STREAM_END block (the file was cut, or the program ended before its session "
             "stopped); events lost after the last packet are not counted\n";
  }
  appendf(out, "\ndamage\n");
  if (damage.empty()) appendf(out, "  (none)\n");
  for (const reader::Damage& d : damage)
    out += "  at byte " + std::to_string(d.offset) + ": " + d.message + "\n";
}

int run_info(const std::vector<std::string>& words) {
  std::optional<Args> args = parse_args("info", words, {});
  if (!args) return kExitUsage;
  if (args->positional.empty()) return usage_error("info", "missing FILE");
  if (args->positional.size() > 1)
    return usage_error("info", "expects one FILE, got " + std::to_string(args->positional.size()));
  const std::string& path = args->positional[0];
  std::optional<Trace> trace = open_trace(path);
  if (!trace) return kExitTrace;

  EventSummary s;
  reader::EventReader events(*trace);
  reader::ActivityMatcher matcher;
  reader::Event e;
  while (events.next(e)) {
    if (s.events == 0) s.first_ns = e.time_ns;
    s.first_ns = std::min(s.first_ns, e.time_ns);
    s.last_ns = std::max(s.last_ns, e.time_ns);
    ++s.events;
    ++s.per_descriptor[e.descriptor];
    matcher.add(e);
  }
  s.activities = matcher.finish();
  const std::vector<reader::StreamStats> stats = reader::stream_stats(*trace);
  const std::vector<reader::Damage> damage = all_damage(*trace, events);

  Output out;
  std::string& text = out.buffer();
  print_file(path, *trace, s, text);
  print_processes(*trace, text);
  print_streams(stats, events, text);
  print_event_counts(s, text);
  print_losses(stats, text);
  print_activities(s.activities, text);
  print_problems(*trace, stats, damage, live_recorder(*trace, path), text);
  out.flush();
  return report_damage(path, damage, events.events_read());
}

}  // namespace

const Command kInfoCommand = {
    "info",
    "Summarize a trace: clock, streams, counts, losses, durations",
    R"(usage: spoor info FILE

Prints what the trace FILE ("-" reads standard input) holds: its size and format version; how
much its COMPRESSED blocks expand to (their ratio), if it has any; the clock
(source and frequency); the time span of its events; the traced processes;
each stream (id, pid, cpu, packets, events, lost events); event counts per
provider and event; lost events per stream with the intervals they were lost
in; start/stop activity durations (count, min, median, max) per provider and
kind; warnings; and damage, if any.

exit status: 0 when the whole trace was read; 1 when it cannot be read or is
damaged (the summary of what was recovered is printed first); 2 for a usage
error.
)",
    run_info,
};

}  // namespace spoor::cli
