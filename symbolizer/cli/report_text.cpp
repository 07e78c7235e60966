// The text form of `spoor report`, printed from the JSON document
// (report_data.h) so the two never disagree. Written for a reader who has
// not seen the trace: every number has its unit, every table its header,
// every stack its function names with file:line.
#include "report_text.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "event_text.h"
#include "report_format.h"
#include "report_sched.h"
#include "report_text_parts.h"
#include "spoor/kernelsrc/attr_plan.h"

namespace spoor::cli {
namespace text {

uint64_t u(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<uint64_t>() : 0; }
int64_t i64(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<int64_t>() : 0; }
std::string str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// One line of at most `max` bytes: a command line may hold newlines and
// tabs (python3 -c 'a\nb'), which would break the table's rows.
std::string clipped(const std::string& text, size_t max) {
  std::string s;
  for (char c : text) {
    if (c == '\n') s += "\\n";
    else if (c == '\t') s += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) s += '?';
    else s += c;
  }
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

void heading(std::string& out, const std::string& title) {
  out += "\n" + title + "\n" + std::string(title.size(), '=') + "\n";
}

std::string frame_label(const json& f) {
  std::string s = short_function(str(f, "function"));
  if (s.empty()) {
    const std::string module = str(f, "module");
    if (module.empty()) return str(f, "address");
    const size_t slash = module.rfind('/');
    return (slash == std::string::npos ? module : module.substr(slash + 1)) + "+" + str(f, "module_offset");
  }
  const std::string file = str(f, "file");
  if (!file.empty()) {
    const size_t slash = file.rfind('/');
    s += "  " + (slash == std::string::npos ? file : file.substr(slash + 1));
    if (u(f, "line") != 0) s += ":" + std::to_string(u(f, "line"));
  } else if (f.contains("symbol_offset")) {
    s += "+" + str(f, "symbol_offset");
  }
  if (f.value("inlined", false)) s += "  (inlined)";
  return s;
}

std::string function_cell(const json& j) {
  std::string s = short_function(str(j, "function"));
  const std::string loc = str(j, "location");
  if (!loc.empty()) s += "  " + loc;
  else if (j.contains("symbol_offset")) s += "+" + str(j, "symbol_offset");
  return s;
}

void bar_chart(const std::string& title, const std::vector<uint64_t>& values, uint64_t rows, const std::string& from,
               const std::string& to, std::string& out) {
  const uint64_t top = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  if (top == 0) return;
  out += "\n  " + title + "\n";
  const std::string top_label = bytes_text(top), zero_label = bytes_text(0);
  const size_t label_width = std::max(top_label.size(), zero_label.size());
  for (uint64_t row = rows; row >= 1; --row) {
    const std::string label = row == rows ? top_label : "";
    out += "    " + std::string(label_width - label.size(), ' ') + label + " |";
    // Rounded up, in 128 bits: a damaged trace's sizes may come near 2^64.
    for (const uint64_t v : values)
      out += (static_cast<unsigned __int128>(v) * rows + top - 1) / top >= row ? '#' : ' ';
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  out += "    " + std::string(label_width - zero_label.size(), ' ') + zero_label + " +" +
         std::string(values.size(), '-') + "\n";
  const size_t axis = values.size() + 1;  // the '+' and the columns
  const size_t gap = axis > from.size() + to.size() ? axis - from.size() - to.size() : 2;
  out += "    " + std::string(label_width + 1, ' ') + from + std::string(gap, ' ') + to + "\n";
}

}  // namespace text

namespace {

using namespace text;

// Rows of the per-thread I/O table.
constexpr size_t kIoThreadRows = 10;

// --- processes --------------------------------------------------------------

// In a process that execs, the image a thread ran in: "exec #2", "first
// image"; "" otherwise.
std::string thread_image_text(const json& th) {
  if (!th.contains("exec_count")) return "";
  const uint64_t n = u(th, "exec_count");
  return n == 0 ? "first image" : "exec #" + std::to_string(n);
}

// A thread's name for a table, "-" when it has none, with its image when
// its process execs ("bash (exec #2)").
std::string thread_name_text(const json& th) {
  const std::string name = str(th, "name").empty() ? "-" : str(th, "name");
  const std::string image = thread_image_text(th);
  return image.empty() ? name : name + " (" + image + ")";
}

// What an image ran: its command line, else its executable, else the
// kernel's name for it (a recording without the preload knows only that).
std::string image_named(const json& image) {
  for (const char* key : {"command_line", "exe", "comm"})
    if (!str(image, key).empty()) return str(image, key);
  return "";
}

// What a process was started as: its first image's command line when it
// execs (the row's exec notes then list the images that followed, each with
// its own), else the process's.
std::string started_as(const json& p) {
  const json& images = p["images"];
  if (images.size() > 1) {
    if (!str(images[0], "command_line").empty()) return str(images[0], "command_line");
    if (!str(images[0], "exe").empty()) return str(images[0], "exe");
  }
  return str(p, "command_line");
}

void print_processes(const json& procs, std::string& out) {
  heading(out, "Processes and threads");
  if (procs.empty()) {
    out += "  (no traced process)\n";
    return;
  }
  // The tree: children under their parent, in start order.
  std::map<uint64_t, std::vector<const json*>> children;
  std::map<uint64_t, bool> present;
  for (const json& p : procs) present[u(p, "pid")] = true;
  std::vector<const json*> roots;
  for (const json& p : procs) {
    if (present.count(u(p, "ppid")) && u(p, "ppid") != u(p, "pid")) children[u(p, "ppid")].push_back(&p);
    else roots.push_back(&p);
  }
  for (auto& [pid, list] : children)
    std::stable_sort(list.begin(), list.end(),
                     [](const json* a, const json* b) { return i64(*a, "start_ns") < i64(*b, "start_ns"); });
  Table t({{"PID", Table::left}, {"START", Table::right}, {"DURATION", Table::right}, {"ENDED", Table::left},
           {"THREADS", Table::right}, {"COMMAND", Table::left}});
  std::function<void(const json&, int)> add = [&](const json& p, int depth) {
    const bool known = p.value("start_known", true);
    t.row({std::string(static_cast<size_t>(depth) * 2, ' ') + std::to_string(u(p, "pid")),
           known ? ms_text(i64(p, "start_ns")) : "?", known ? ms_text(i64(p, "duration_ns")) : "?", str(p, "ended"),
           std::to_string(u(p, "thread_count")), clipped(started_as(p), 100)});
    const json& images = p["images"];
    for (size_t i = 1; i < images.size(); ++i)
      t.note("exec #" + std::to_string(u(images[i], "exec_count")) + " at " + ms_text(i64(images[i], "start_ns")) + ": " +
             clipped(image_named(images[i]), 90));
    if (p.contains("exec_failures"))
      for (const json& f : p["exec_failures"]) t.note("exec failed: " + f.get<std::string>());
    if (p.contains("untraceable_exec")) t.note("exec not traced: " + str(p, "untraceable_exec"));
    if (p.contains("samples_off_under"))
      t.note("no CPU samples: held by " + str(p, "samples_off_under") +
             " from its start, a debugger or tracer, which stops at each sample's signal");
    for (const json* c : children[u(p, "pid")]) add(*c, depth + 1);
  };
  for (const json* r : roots) add(*r, 0);
  out += "  START and DURATION in ms from the first event of the trace";
  if (std::any_of(procs.begin(), procs.end(), [](const json& p) { return !p.value("start_known", true); }))
    out += "; ? where the trace names a process but holds no event, fork or exit of it (yet)";
  out += ".\n\n";
  t.print(out);

  for (const json& p : procs) {
    const json& threads = p["threads"];
    std::set<uint64_t> tids;
    for (const json& th : threads) tids.insert(u(th, "tid"));
    if (tids.size() <= 1) continue;  // one thread (through execs): the process line says it all
    out += "\n  threads of pid " + std::to_string(u(p, "pid")) + "\n";
    Table tt({{"TID", Table::right}, {"NAME", Table::left}, {"START", Table::right}, {"DURATION", Table::right},
              {"END", Table::left}, {"EVENTS", Table::right}});
    for (const json& th : threads)
      tt.row({std::to_string(u(th, "tid")), str(th, "name").empty() ? "-" : str(th, "name"), ms_text(i64(th, "start_ns")),
              ms_text(i64(th, "duration_ns")), th.value("ended", false) ? "ThreadEnd" : "at process end",
              count_text(u(th, "events"))});
    tt.print(out, "    ");
  }
}

// --- io ---------------------------------------------------------------------

// A file's cell: its path, and for a pipe the programs at its ends, two
// named a side: "pipe:[42] from tar to gzip", "pipe:[9] from cc1, as, +2
// more to make".
std::string file_cell(const json& x) {
  std::string s = str(x, "path");
  auto side = [&x](const char* key) {
    std::string text;
    if (!x.contains(key)) return text;
    const json& names = x[key];
    for (size_t i = 0; i < names.size() && i < 2; ++i) text += (i ? ", " : "") + names[i].get<std::string>();
    if (names.size() > 2) text += ", +" + std::to_string(names.size() - 2) + " more";
    return text;
  };
  if (const std::string from = side("writers"); !from.empty()) s += " from " + from;
  if (const std::string to = side("readers"); !to.empty()) s += " to " + to;
  return s;
}

// The bytes read and written over time, a chart each (none for a way no
// byte went), from the first call that moved a byte to the last.
void io_over_time_charts(const json& io, std::string& out) {
  if (!io.contains("over_time")) return;
  const json& t = io["over_time"];
  // Fewer columns than this: the calls came within a few nanoseconds (one
  // copy_file_range, say), and a chart would show one bar.
  constexpr size_t kFewestColumns = 8;
  if (t["read_bytes"].size() < kFewestColumns) return;
  const int64_t start_ns = i64(t, "start_ns"), column_ns = i64(t, "column_ns");
  struct Way {
    const char* key;
    const char* done;  // "bytes read over time"
    const char* did;   // "the calls that ended in it read"
  };
  for (const Way& way : {Way{"read_bytes", "read", "read"}, Way{"written_bytes", "written", "wrote"}}) {
    const std::vector<uint64_t> bytes = t[way.key].get<std::vector<uint64_t>>();
    bar_chart(std::string("bytes ") + way.done + " over time (each column " + duration_text(column_ns) +
                  ", as high as the bytes the calls that ended in it " + way.did + ")",
              bytes, 4, ms_text(start_ns), ms_text(start_ns + column_ns * static_cast<int64_t>(bytes.size())), out);
  }
}

void print_io(const json& io, std::string& out) {
  heading(out, "File I/O");
  const json& t = io["totals"];
  out += "  " + count_text(u(t, "opens")) + " opens, " + count_text(u(t, "reads")) + " reads (" + bytes_text(u(t, "bytes_read")) +
         "), " + count_text(u(t, "writes")) + " writes (" + bytes_text(u(t, "bytes_written")) + "), " +
         count_text(u(t, "errors")) + " failed calls; " + ms_text(i64(t, "total_ns")) + " in I/O calls\n";
  if (io.contains("aio")) {
    const json& a = io["aio"];
    out += "  asynchronous I/O (POSIX AIO, Linux AIO): " + count_text(u(a, "requests")) + " requests handed over, " +
           count_text(u(a, "results")) + " results collected\n";
    if (u(a, "uncollected") != 0)
      out += "    " + count_text(u(a, "uncollected")) +
             " requests have no collected result in the trace (a program may reap Linux AIO results from the "
             "kernel's ring itself); their bytes are not counted\n";
  }
  if (io.contains("io_uring")) {
    // Counted with the calls above, at their completions: say what the
    // trace could not see.
    const json& r = io["io_uring"];
    out += "  io_uring: " + count_text(u(r, "requests")) + " requests seen handed over, " +
           count_text(u(r, "completions")) + " completions read\n";
    if (u(r, "unseen") != 0)
      out += "    " + count_text(u(r, "unseen")) +
             " completions could not be read: the program reaped them, and the kernel may have reused their slots, "
             "between calls on the ring Spoor saw; their bytes are not counted\n";
    if (u(r, "unmatched") != 0)
      out += "    " + count_text(u(r, "unmatched")) +
             " completions are of requests handed over by the program's own inline system calls, which Spoor "
             "does not see; their bytes are counted on the ring's row, as neither read nor written\n";
    if (u(r, "uncollected") != 0)
      out += "    " + count_text(u(r, "uncollected")) +
             " requests have no completion in the trace (one is read at the program's next call on its ring: "
             "those reaped after the last are missed); their bytes are not counted\n";
  }
  io_over_time_charts(io, out);
  out += "\n  files, by time spent in their calls (" + std::to_string(u(io, "file_count")) + " in all)\n";
  Table f({{"OPENS", Table::right}, {"READS", Table::right}, {"READ", Table::right}, {"WRITES", Table::right},
           {"WRITTEN", Table::right}, {"ERRORS", Table::right}, {"TIME", Table::right}, {"FILE", Table::left}});
  for (const json& x : io["files"])
    f.row({count_text(u(x, "opens")), count_text(u(x, "reads")), bytes_text(u(x, "bytes_read")), count_text(u(x, "writes")),
           bytes_text(u(x, "bytes_written")), count_text(u(x, "errors")), ms_text(i64(x, "total_ns")), file_cell(x)});
  f.print(out, "    ");
  out += "\n  per thread\n";
  Table th({{"PID", Table::right}, {"TID", Table::right}, {"NAME", Table::left}, {"READS", Table::right}, {"READ", Table::right},
            {"WRITES", Table::right}, {"WRITTEN", Table::right}, {"TIME", Table::right}});
  std::vector<const json*> busy;
  for (const json& x : io["threads"])
    if (u(x, "reads") + u(x, "writes") > 0) busy.push_back(&x);
  std::stable_sort(busy.begin(), busy.end(),
                   [](const json* a, const json* b) { return i64(*a, "total_ns") > i64(*b, "total_ns"); });
  const size_t hidden = busy.size() > kIoThreadRows ? busy.size() - kIoThreadRows : 0;
  busy.resize(busy.size() - hidden);
  for (const json* xp : busy) {
    const json& x = *xp;
    th.row({std::to_string(u(x, "pid")), std::to_string(u(x, "tid")), thread_name_text(x),
            count_text(u(x, "reads")), bytes_text(u(x, "bytes_read")), count_text(u(x, "writes")),
            bytes_text(u(x, "bytes_written")), ms_text(i64(x, "total_ns"))});
  }
  th.print(out, "    ");
  if (hidden > 0) out += "    (" + std::to_string(hidden) + " more threads that read or wrote)\n";
  out += "\n  slowest calls\n";
  Table s({{"DURATION", Table::right}, {"AT", Table::right}, {"CALL", Table::left}, {"RESULT", Table::right},
           {"TID", Table::right}, {"FILE", Table::left}});
  for (const json& x : io["slowest"])
    s.row({ms_text(i64(x, "duration_ns")), ms_text(i64(x, "start_ns")), str(x, "call"), std::to_string(i64(x, "result")),
           std::to_string(u(x["thread"], "tid")), file_cell(x)});
  s.print(out, "    ");
}

// --- cpu --------------------------------------------------------------------

void function_table(const json& functions, uint64_t total, std::string& out, const std::string& indent) {
  Table t({{"SELF", Table::right}, {"SELF %", Table::right}, {"INCLUSIVE", Table::right}, {"INCL %", Table::right},
           {"FUNCTION", Table::left}});
  for (const json& f : functions)
    t.row({count_text(u(f, "self")), percent_text(u(f, "self"), total), count_text(u(f, "inclusive")),
           percent_text(u(f, "inclusive"), total), function_cell(f)});
  t.print(out, indent);
}

// When samples came at a coarser rate than asked: the CPU-time timer is
// checked at the kernel's tick, so at 1 kHz under a 250 Hz kernel each
// sample stands for ~4 periods. The proportions hold; the stacks are
// fewer. "" when they came at about the rate asked (or are too few to say).
std::string coarse_samples_hint(uint64_t periods, uint64_t samples) {
  if (samples < 20 || periods < 2 * samples) return "";
  char each[32];
  std::snprintf(each, sizeof each, "%.1f", static_cast<double>(periods) / static_cast<double>(samples));
  return "  each sample stands for " + std::string(each) +
         " periods on average: the kernel checks CPU-time timers only at its tick\n"
         "  (spoor record --sample-clock task takes a sample every period, for up to 32 threads at once)\n";
}

// ", 301 ms of CPU by its own clock" for a thread whose end said: what it
// used while traced.
std::string own_clock_text(const json& th) {
  if (!th.contains("traced_cpu_ns")) return "";
  char ms[64];
  std::snprintf(ms, sizeof ms, ", %.0f ms of CPU by its own clock", static_cast<double>(u(th, "traced_cpu_ns")) / 1e6);
  return ms;
}

void print_cpu(const json& cpu, std::string& out) {
  heading(out, "CPU samples");
  const uint64_t total = u(cpu, "periods");
  const uint64_t hz = cpu.contains("sample_hz") ? u(cpu, "sample_hz") : 1000;
  const bool recorded = cpu.contains("sample_hz_recorded") && cpu["sample_hz_recorded"].get<bool>();
  const double cpu_ms = cpu.contains("cpu_ms") ? cpu["cpu_ms"].get<double>() : static_cast<double>(total);
  char period[64];
  std::snprintf(period, sizeof period, "%g ms", hz != 0 ? 1000.0 / static_cast<double>(hz) : 0.0);
  char time[64];
  std::snprintf(time, sizeof time, "%.0f ms", cpu_ms);
  out += "  " + std::string(time) + " of CPU time: " + count_text(total) + " sampling periods in " +
         count_text(u(cpu, "samples")) + " samples (a period is " + period + " of CPU time at --sample-hz " +
         std::to_string(hz) + (recorded ? "" : ", spoor record's default: the trace does not say") + ")\n";
  out += coarse_samples_hint(total, u(cpu, "samples"));
  if (u(cpu, "threads_with_cpu_time") != 0) {
    char clocks[64];
    std::snprintf(clocks, sizeof clocks, "%.0f ms", static_cast<double>(u(cpu, "threads_traced_cpu_ns")) / 1e6);
    out += "  the threads' own clocks: " + std::string(clocks) + " of CPU time in " +
           count_text(u(cpu, "threads_with_cpu_time")) + " thread" +
           (u(cpu, "threads_with_cpu_time") == 1 ? "" : "s") + " while traced";
    // The loader's work before the shim attached (and an untraced image's
    // before an exec): unsampled, so said apart.
    const uint64_t untraced = u(cpu, "threads_untraced_cpu_ns");
    if (untraced >= 1'000'000) {
      char before[64];
      std::snprintf(before, sizeof before, "%.0f ms", static_cast<double>(untraced) / 1e6);
      out += ", and " + std::string(before) +
             " before Spoor attached (starting and loading each process, the shim included, and any untraced "
             "program it exec'd from: never sampled)";
    }
    out += "\n";
  }
  if (cpu.contains("periods_in_threads_without_clock") && u(cpu, "periods_in_threads_without_clock") != 0) {
    const uint64_t threads = u(cpu, "sampled_threads_without_clock");
    out += "  " + count_text(u(cpu, "periods_in_threads_without_clock")) + " of the periods are in " +
           count_text(threads) + " thread" + (threads == 1 ? "" : "s") +
           " whose own clock the trace lacks (no ThreadEnd: recorded with -p leaving out the thread provider, "
           "or killed)" + (u(cpu, "threads_with_cpu_time") != 0 ? ", not in the clocks' sum" : "") + "\n";
  }
  out += "\n  top functions by self time\n";
  function_table(cpu["functions"], total, out, "    ");
  // The tracer's own share of the program's CPU, when it ranks.
  for (const json& f : cpu["functions"])
    if (str(f, "function") == analysis::kTracerFrameName)
      out += "    " + std::string(analysis::kTracerFrameName) + " is the time the program's threads spent in Spoor's hooks " +
             "recording events: " + percent_text(u(f, "self"), total) +
             " here (fewer providers with spoor record -p, or a smaller --stack-depth, lower it)\n";
  out += "\n  top functions by inclusive time\n";
  function_table(cpu["functions_by_inclusive"], total, out, "    ");
  // One sampled thread: its table would repeat the one above.
  for (const json& th : cpu["threads"].size() > 1 ? cpu["threads"] : json::array()) {
    if (!th.contains("functions")) break;  // beyond --top
    std::string what = str(th, "name");
    const std::string image = thread_image_text(th);
    if (!image.empty()) what += (what.empty() ? "" : ", ") + image;
    out += "\n  thread " + std::to_string(u(th, "tid")) + (what.empty() ? "" : " (" + what + ")") +
           " of pid " + std::to_string(u(th, "pid")) + ": " + count_text(u(th, "periods")) + " periods, " +
           percent_text(u(th, "periods"), total) + own_clock_text(th) + "\n";
    function_table(th["functions"], u(th, "periods"), out, "    ");
  }
}

// --- kernel -----------------------------------------------------------------

// When many kernel samples' walks ended at the end of their stack copy:
// what would give them their outer frames, or that nothing in the
// recording can. "" when few did (5% of the samples, and 10, is many).
std::string stack_copy_hint(const json& cpu) {
  const uint64_t n = u(cpu, "stack_copy_short");
  if (n < 10 || n * 20 < u(cpu, "samples")) return "";
  // The kernel trims a copy near its 64 KiB cap so the record (registers,
  // callchain) fits a 16-bit size: within 2 KiB of the cap is the most.
  const uint64_t largest = u(cpu, "largest_stack_copy");
  if (largest + 2048 < kernelsrc::kMaxStackBytes) {
    const uint64_t twice = (2 * largest + 7) & ~uint64_t{7};
    const uint64_t next =
        std::min<uint64_t>(kernelsrc::kMaxStackBytes, std::max<uint64_t>(kernelsrc::kDefaultStackBytes, twice));
    return "    " + count_text(n) + " samples stopped because the stack copy was too short; try --kernel-stack-size " +
           std::to_string(next) + "\n";
  }
  return "    " + count_text(n) + " samples stopped because the stack copy was too short, though it held " +
         std::to_string(largest) + " bytes, the most the kernel copies: their outer frames are missing\n";
}

void print_kernel(const json& k, std::string& out) {
  heading(out, "Kernel (perf_event_open records)");
  const json& sw = k["switches"];
  out += "  context switches: " + count_text(u(sw, "switches")) + " (" + count_text(u(sw, "blocked")) + " blocked, " +
         count_text(u(sw, "preempted")) + " preempted), " + ms_text(i64(sw, "off_cpu_ns")) + " off the CPU\n";
  const json& f = k["faults"];
  out += "  page faults: " + count_text(u(f, "minor")) + " minor, " + count_text(u(f, "major")) + " major\n";
  Table t({{"PID", Table::right}, {"TID", Table::right}, {"SWITCHES", Table::right}, {"BLOCKED", Table::right},
           {"PREEMPTED", Table::right}, {"OFF-CPU", Table::right}, {"MINOR F", Table::right}, {"MAJOR F", Table::right},
           {"SYSCALLS", Table::right}, {"SAMPLES", Table::right}, {"NAME", Table::left}});
  size_t rows = 0;
  for (const json& th : k["threads"]) {
    if (rows++ == 20) break;
    t.row({std::to_string(u(th, "pid")), std::to_string(u(th, "tid")), count_text(u(th, "switches")),
           count_text(u(th, "blocked")), count_text(u(th, "preempted")), ms_text(i64(th, "off_cpu_ns")),
           count_text(u(th, "minor_faults")), count_text(u(th, "major_faults")), count_text(u(th, "syscalls")),
           count_text(u(th, "samples")), str(th, "name")});
  }
  if (!t.empty()) {
    out += "\n  threads, most time off the CPU first\n";
    t.print(out, "    ");
  }
  if (!f["top_functions"].empty()) {
    out += "\n  functions where page faults hit\n";
    Table ft({{"MINOR", Table::right}, {"MAJOR", Table::right}, {"FUNCTION", Table::left}});
    for (const json& x : f["top_functions"])
      ft.row({count_text(u(x, "minor")), count_text(u(x, "major")), function_cell(x)});
    ft.print(out, "    ");
  }
  if (!k["syscalls"].empty()) {
    out += "\n  system calls, most time first\n";
    Table st({{"CALLS", Table::right}, {"ERRORS", Table::right}, {"TOTAL", Table::right}, {"MAX", Table::right},
              {"SYSCALL", Table::left}});
    for (const json& x : k["syscalls"])
      st.row({count_text(u(x, "count")), count_text(u(x, "errors")), duration_text(i64(x, "total_ns")),
              duration_text(i64(x, "max_ns")), str(x, "name")});
    st.print(out, "    ");
    const json& shim = k["preload_start_syscalls"];
    if (u(shim, "count") > 0)
      out += "    left out: " + count_text(u(shim, "count")) + " calls (" + duration_text(i64(shim, "total_ns")) +
             ") Spoor's preloaded library made as it started in the program's processes and threads (" +
             count_text(u(shim, "starts")) + (u(shim, "starts") == 1 ? " start" : " starts") + ")\n";
    if (k.value("syscalls_include_preload", false))
      out += "    (these include the calls Spoor's preloaded library makes in the process after its start: its\n"
             "    unwinder's signal masks, a thread's sample timer at its end, loading it; spoor record\n"
             "    --no-preload counts the program's alone)\n";
  }
  const json& cpu = k["cpu"];
  if (u(cpu, "samples") > 0) {
    const json& uw = cpu["unwound"];
    out += "\n  CPU samples taken by the kernel (a profile of their own; the preload sampler's are under CPU samples): " + count_text(u(cpu, "samples")) +
           " samples, unwound " + count_text(u(uw, "dwarf")) + " with DWARF, " + count_text(u(uw, "frame_pointer")) +
           " by frame pointers, " + count_text(u(uw, "pc_only")) + " pc only; " + count_text(u(uw, "frames")) +
           " frames\n";
    if (u(cpu, "sample_hz") > 0)
      out += "    one sample stands for " + duration_text(i64(cpu, "period_ns")) + " of CPU time (" +
             str(cpu, "sample_event") + " at " + count_text(u(cpu, "sample_hz")) + " Hz): " +
             ms_text(static_cast<int64_t>(cpu.value("cpu_ms", 0.0) * 1e6)) + " in all\n";
    else if (!cpu.value("sample_hz_recorded", false))
      out += "    CPU time per sample unknown: the trace does not say the sampler's rate (recorded before spoor wrote it)\n";
    if (const uint64_t in_kernel = cpu.value("in_kernel", uint64_t{0}); in_kernel > 0)
      out += "    " + count_text(in_kernel) + " (" + percent_text(in_kernel, u(cpu, "samples")) +
             ") taken in the kernel, " + count_text(u(cpu, "samples") - in_kernel) + " in user space\n";
    for (const json& s : cpu["stops"])
      out += "    " + count_text(u(s, "count")) + " stopped early: " + str(s, "reason") + "\n";
    out += stack_copy_hint(cpu);
    if (cpu.contains("unwind_problems") && !cpu["unwind_problems"].empty()) {
      out += "    modules the unwinder could not use (stacks end at their frames):\n";
      for (const json& p : cpu["unwind_problems"]) out += "      " + str(p, "module") + ": " + str(p, "message") + "\n";
    }
    if (cpu.contains("functions")) {
      const uint64_t total = u(cpu, "periods");
      out += "\n    top functions by self time\n";
      function_table(cpu["functions"], total, out, "      ");
      out += "\n    top functions by inclusive time\n";
      function_table(cpu["functions_by_inclusive"], total, out, "      ");
    }
  }
  if (k.contains("sched")) print_sched(k["sched"], out);
  if (k.contains("block")) print_block(k["block"], out);
  for (const json& l : k["lost"])
    out += "  lost kernel records (" + str(l, "source") + "): " + count_text(u(l, "count")) + "\n";
}

// --- custom events ----------------------------------------------------------

void print_events(const json& ev, std::string& out) {
  heading(out, "Program events (providers other than the recorder's)");
  Table c({{"PROVIDER", Table::left}, {"EVENT", Table::left}, {"COUNT", Table::right}});
  for (const json& x : ev["counts"]) c.row({str(x, "provider"), str(x, "event"), count_text(u(x, "count"))});
  if (c.empty()) out += "  (none)\n";
  else c.print(out);
  out += "\n  durations of start/stop activities\n";
  Table a({{"PROVIDER", Table::left}, {"ACTIVITY", Table::left}, {"COUNT", Table::right}, {"MIN", Table::right},
           {"MEDIAN", Table::right}, {"P99", Table::right}, {"MAX", Table::right}, {"TOTAL", Table::right}});
  for (const json& x : ev["activities"])
    // Activities run from nanoseconds to minutes: each in its own unit.
    a.row({str(x, "provider"), str(x, "kind"), count_text(u(x, "count")), duration_text(i64(x, "min_ns")),
           duration_text(i64(x, "median_ns")), duration_text(i64(x, "p99_ns")), duration_text(i64(x, "max_ns")),
           duration_text(i64(x, "total_ns"))});
  if (a.empty()) out += "    (none)\n";
  else a.print(out, "    ");
  if (u(ev, "unmatched_starts") + u(ev, "unmatched_stops") > 0)
    out += "    unmatched: " + count_text(u(ev, "unmatched_starts")) + " starts without a stop, " +
           count_text(u(ev, "unmatched_stops")) + " stops without a start\n";
}

// --- health -----------------------------------------------------------------

void print_health(const json& h, bool recording_goes_on, std::string& out) {
  heading(out, "Trace health");
  out += "  lost events: " + count_text(u(h, "lost_events")) +
         (u(h, "lost_events") > 0
              ? " (figures above undercount: a ring was full, which a larger --buffer-size avoids, a signal "
                "handler made stdio calls while its thread was inside Spoor's hooks, where they cannot be "
                "recorded, or libraries' constructors allocated more than Spoor keeps before it attaches; "
                "spoor record's summary said which)"
              : "") +
         "\n";
  if (h.contains("kernel_lost"))
    for (const json& l : h["kernel_lost"])
      out += "    kernel records (" + str(l, "source") + "): " + count_text(u(l, "count")) + " lost\n";
  for (const json& s : h["streams"]) {
    out += "    stream " + std::to_string(u(s, "stream")) + " (pid " + std::to_string(u(s, "pid")) + ", cpu " +
           std::to_string(u(s, "cpu")) + "): " + count_text(u(s, "lost")) + " lost";
    if (u(s, "missing_packets") > 0) out += ", " + count_text(u(s, "missing_packets")) + " packets missing";
    if (!s.value("ended", true))
      out += recording_goes_on ? ", no STREAM_END yet (the recording goes on)"
                               : ", no STREAM_END (the recording did not finish)";
    out += "\n";
  }
  if (h.contains("preload_start")) {
    const json& ps = h["preload_start"];
    const uint64_t images = u(ps, "images");
    out += "  Spoor's start-up in the program: " + duration_text(i64(ps, "total_ns")) +
           (images == 1 ? " (the preloaded library's set-up as the process started)"
                        : " over " + count_text(images) + " set-ups of the preloaded library (one per process, exec " +
                              "and fork child), " + duration_text(i64(ps, "median_ns")) + " each (median), " +
                              duration_text(i64(ps, "max_ns")) + " the longest") +
           "\n";
  }
  if (h["damage"].empty()) {
    out += "  damage: none\n";
  } else {
    out += "  damage: the report covers the trace up to these points only\n";
    for (const json& d : h["damage"]) out += "    at byte " + std::to_string(u(d, "offset")) + ": " + str(d, "message") + "\n";
  }
  for (const json& w : h["warnings"]) out += "  warning: " + w.get<std::string>() + "\n";
  if (!h["symbol_problems"].empty()) {
    out += "  modules whose symbols were not found (their frames show as module+0xoffset):\n";
    for (const json& p : h["symbol_problems"]) out += "    " + str(p, "module") + ": " + str(p, "message") + "\n";
  }
}

}  // namespace

void print_report_text(const json& r, std::string& out) {
  const json& t = r["trace"];
  out += "spoor report: " + (str(t, "path") == "-" ? std::string("(standard input)") : str(t, "path")) + "\n";
  auto counted = [](uint64_t n, const char* one, const char* many) { return count_text(n) + " " + (n == 1 ? one : many); };
  out += "  " + counted(u(t, "events"), "event", "events") + " over " + ms_text(i64(t, "duration_ns")) + ", " +
         counted(u(t, "processes"), "process", "processes") + ", " + counted(u(t, "threads"), "thread", "threads") +
         " (" + bytes_text(u(t, "file_size")) + " trace)\n";
  if (t.contains("recorder_running"))
    out += "  still being recorded: spoor record (pid " + std::to_string(u(t, "recorder_running")) +
           ") is writing this file; this report covers what it held when read\n";
  if (t.contains("only_pids")) {
    std::string pids;
    for (const json& p : t["only_pids"]) pids += (pids.empty() ? "" : ", ") + std::to_string(p.get<uint64_t>());
    out += "  the heap, I/O, CPU, event and kernel sections count only the events of pid " + pids + " (--pid)\n";
  }
  if (r.contains("processes")) print_processes(r["processes"], out);
  if (r.contains("heap")) print_heap(r["heap"], out);
  if (r.contains("io")) print_io(r["io"], out);
  if (r.contains("cpu")) print_cpu(r["cpu"], out);
  if (r.contains("events")) print_events(r["events"], out);
  if (r.contains("kernel")) print_kernel(r["kernel"], out);
  print_health(r["health"], t.contains("recorder_running"), out);
}

}  // namespace spoor::cli
