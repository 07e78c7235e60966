// spoor record: run a program under the preload shim and write its trace.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "provider_spec.h"
#include "record.h"
#include "rule_cache_file.h"
#include "spoor/kernelsrc/kernel_spec.h"

namespace spoor::cli {
namespace {

// "4M", "512K", "1G" or a plain byte count; 0 when malformed.
size_t parse_size(const std::string& text) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  const std::string unit(end);
  if (unit.empty()) return n;
  if (unit == "K" || unit == "KiB" || unit == "k") return n << 10;
  if (unit == "M" || unit == "MiB") return n << 20;
  if (unit == "G" || unit == "GiB") return n << 30;
  return 0;
}

// Why the processes' events were lost (the kernel's have their own line):
// full rings, calls of signal handlers that interrupted the shim, or
// allocations before attach past the pre-attach log; the shim counts the
// last two apart.
// Why the program did not load the shim, from what its ELF headers said
// before it started ("" when they said nothing).
std::string untraceable_reason(const std::string& why) {
  if (why.empty() || why == "setuid program") return "a static or setuid program ignores LD_PRELOAD";
  if (why == "static binary") return "a static binary: no loader runs to read LD_PRELOAD";
  if (why == "program with file capabilities")
    return "a program with file capabilities (setcap) runs in secure mode, where the loader ignores LD_PRELOAD";
  // The sanitizer builds (program_image.h).
  if (why.ends_with(" build"))
    return why + ": its sanitizer runtime must be the first library loaded, so it ran without the shim";
  // Another ELF class or machine (program_image.h).
  return why + ": the shim is built for this machine's programs, so it ran without it";
}

std::string lost_reason(const record::RecordResult& r) {
  const uint64_t lost = r.lost - r.kernel_lost;
  if (lost == 0) return "";
  struct Cause {
    uint64_t count;
    std::string text;
  };
  const uint64_t counted = r.handler_calls_lost + r.pre_attach_calls_lost;
  const Cause causes[] = {
      {r.handler_calls_lost,
       "stdio calls a signal handler made while its thread was inside Spoor's hooks, where they cannot be recorded"},
      {r.pre_attach_calls_lost,
       "allocations libraries' constructors made before Spoor attached, past the 32,768 it keeps for them"},
      {counted < lost ? lost - counted : 0,
       r.compression.drain_wait_seconds >= 0.001
           ? "a ring was full while the drain waited for the file: try --wait-when-full"
           : "a ring was full: try --wait-when-full or a larger --buffer-size"},
  };
  std::vector<const Cause*> present;
  for (const Cause& c : causes)
    if (c.count > 0) present.push_back(&c);
  if (present.size() == 1) return " (" + present[0]->text + ")";
  std::string text;
  for (const Cause* c : present) text += (text.empty() ? "" : "; ") + std::to_string(c->count) + " " + c->text;
  return " (" + text + ")";
}

// "1234" or "1234,5678" into `pids`; false when malformed.
bool parse_pids(const std::string& text, std::vector<pid_t>& pids) {
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string one = text.substr(at, comma - at);
    char* end = nullptr;
    const long pid = std::strtol(one.c_str(), &end, 10);
    if (one.empty() || *end != '\0' || pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
    pids.push_back(static_cast<pid_t>(pid));
    at = comma + 1;
  }
  return !pids.empty();
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(b));
  return buf;
}

int run_record_command(const std::vector<std::string>& words) {
  record::RecordOptions options;
  bool no_rule_cache = false;
  size_t i = 0;
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") {
      ++i;
      break;
    }
    if (w.empty() || w[0] != '-') break;  // the command starts here
    // The word after an option is its value; null when it is missing.
    auto value = [&]() -> const std::string* { return i + 1 < words.size() ? &words[++i] : nullptr; };
    if (w == "-o" || w == "--output") {
      const std::string* v = value();
      if (!v) return usage_error("record", w + " needs a file name");
      if (*v == "-" && isatty(STDOUT_FILENO))
        return usage_error("record", "-o - writes the binary trace to standard output, which is a terminal: "
                                     "pipe it (spoor record -o - -- CMD | spoor report -) or name a file");
      options.output_path = *v;
    } else if (w == "-p" || w == "--providers") {
      const std::string* v = value();
      if (!v) return usage_error("record", w + " needs a provider spec");
      std::string why;
      if (!record::shim_provider_spec(*v, &why)) return usage_error("record", why);
      options.providers = *v;
    } else if (w == "--stack-depth") {
      const std::string* v = value();
      const int n = v ? std::atoi(v->c_str()) : 0;
      if (n < 1 || n > 128) return usage_error("record", "--stack-depth needs a number of frames from 1 to 128");
      options.stack_depth = n;
    } else if (w == "--sample-hz") {
      const std::string* v = value();
      char* end = nullptr;
      const long n = v ? std::strtol(v->c_str(), &end, 10) : -1;
      if (!v || v->empty() || *end != '\0' || n < 0 || n > 10000)
        return usage_error("record", "--sample-hz needs a rate from 0 (no samples) to 10000");
      options.sample_hz = static_cast<int>(n);
    } else if (w == "--time-resolution") {
      const std::string* v = value();
      char* end = nullptr;
      const double ns = v ? std::strtod(v->c_str(), &end) : -1;
      if (!v || v->empty() || *end != '\0' || !(ns >= 0) || ns > 1e6)
        return usage_error("record", "--time-resolution needs nanoseconds from 0 (every tick) to 1000000");
      options.time_resolution_ns = ns;
    } else if (w == "--sample-clock") {
      const std::string* v = value();
      if (!v || (*v != "task" && *v != "timer"))
        return usage_error("record", "--sample-clock takes task or timer");
      options.sample_clock = *v;
    } else if (w == "--wait-when-full") {
      options.wait_when_full = true;
    } else if (w == "--compress" || w.starts_with("--compress=")) {
      const std::string* v = w == "--compress" ? value() : nullptr;
      if (w == "--compress" && !v) return usage_error("record", "--compress needs zstd or none");
      const std::string codec = v ? *v : w.substr(w.find('=') + 1);
      if (codec != "zstd" && codec != "none")
        return usage_error("record", "--compress takes zstd or none, not '" + codec + "'");
      options.compress = codec == "zstd";
    } else if (w == "--buffer-size") {
      const std::string* v = value();
      const size_t n = v ? parse_size(*v) : 0;
      if (n < 2 * options.packet_bytes)
        return usage_error("record", "--buffer-size needs a size of at least 256K per CPU, like 4M");
      options.buffer_bytes_per_cpu = n;
      options.buffer_size_given = true;
    } else if (w == "--no-follow") {
      options.no_follow = true;
    } else if (w == "--no-rule-cache") {
      no_rule_cache = true;
    } else if (w == "--kernel" || w.starts_with("--kernel=")) {
      const std::string* v = w == "--kernel" ? value() : nullptr;
      // "--kernel -o t.spoor": the next option is no list of sources.
      if (w == "--kernel" && (!v || v->starts_with("-")))
        return usage_error("record", "--kernel needs a list, like samples,switches,faults (or --kernel-all for all)");
      std::string kernel_error;
      if (!kernelsrc::parse_kernel_spec(v ? *v : w.substr(w.find('=') + 1), &options.kernel, &kernel_error))
        return usage_error("record", "--kernel: " + kernel_error);
    } else if (w == "--kernel-all") {
      options.kernel.all = true;
    } else if (w == "--kernel-stack-size") {
      const std::string* v = value();
      const size_t n = v ? parse_size(*v) : 0;
      if (!v || (n == 0 && *v != "0") || n > kernelsrc::kMaxStackBytes)
        return usage_error("record", "--kernel-stack-size needs a byte count from 0 to " +
                                         std::to_string(kernelsrc::kMaxStackBytes) + ", like 8K");
      options.kernel_stack_bytes = static_cast<uint32_t>(n) & ~7u;
    } else if (w == "--no-preload") {
      options.no_preload = true;
    } else if (w == "--pid") {
      const std::string* v = value();
      if (!v || !parse_pids(*v, options.attach_pids))
        return usage_error("record", "--pid needs process IDs, like 1234 or 1234,5678");
    } else if (w == "--duration") {
      const std::string* v = value();
      char* end = nullptr;
      options.duration_seconds = v ? std::strtod(v->c_str(), &end) : 0;
      if (!v || end == v->c_str() || *end != '\0' || !(options.duration_seconds > 0))
        return usage_error("record", "--duration needs a number of seconds, like 10 or 0.5");
    } else {
      return usage_error("record", "unknown option '" + w + "'");
    }
  }
  options.command.assign(words.begin() + static_cast<long>(i), words.end());
  if (!options.attach_pids.empty()) {
    if (!options.command.empty())
      return usage_error("record", "--pid records processes already running: give it no command");
    // Nothing can be injected into a running process: the kernel's sources.
    options.no_preload = true;
  } else if (options.duration_seconds > 0) {
    return usage_error("record", "--duration goes with --pid (a command is recorded until it ends)");
  }
  if (options.command.empty() && options.attach_pids.empty())
    return usage_error("record", "missing the command to run, as in: spoor record -- ./app");
  if (!no_rule_cache) options.rule_cache = record::default_rule_cache_path();
  // Without the shim there is nothing but the kernel to record.
  if (options.no_preload && !options.kernel.any()) options.kernel.all = true;

  record::RecordResult r;
  std::string error;
  if (!record::run_record(options, &r, &error)) {
    std::fprintf(stderr, "spoor record: %s\n", error.c_str());
    return 127;
  }
  if (!options.attach_pids.empty()) {
    std::string pids;
    for (const pid_t pid : options.attach_pids) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    const size_t n = options.attach_pids.size();
    const std::string outcome =
        r.how_it_ended.empty() ? (n == 1 ? "it ended" : "all ended")
        : n == 1               ? "it was " + r.how_it_ended
                               : std::to_string(n - r.attached_ended) + " of " + std::to_string(n) +
                       (n - r.attached_ended == 1 ? " was " : " were ") + r.how_it_ended;
    std::fprintf(stderr, "spoor record: recorded pid%s %s for %.3f s: %s; the trace was finished %.3f s later\n",
                 n == 1 ? "" : "s", pids.c_str(), r.program_seconds, outcome.c_str(), r.seconds - r.program_seconds);
  } else {
    std::fprintf(stderr, "spoor record: '%s' (pid %d) %s after %.3f s; the trace was finished %.3f s later\n",
                 options.command[0].c_str(), r.pid, r.how_it_ended.c_str(), r.program_seconds,
                 r.seconds - r.program_seconds);
  }
  if (!r.preload_attached && !options.no_preload && !r.region_error.empty())
    std::fprintf(stderr, "spoor record: the program was not traced, no events from it: %s\n",
                 r.region_error.c_str());
  else if (!r.preload_attached && !options.no_preload)
    std::fprintf(stderr, "spoor record: the program never loaded libspoor-preload.so (%s): no events from it; "
                 "to still profile it, record with --no-preload --kernel=samples,switches,faults\n",
                 untraceable_reason(r.program_untraceable).c_str());
  // The program's own refusal is said above; here the rest of its tree's,
  // the first kPidsListed in the order they asked.
  constexpr size_t kPidsListed = 10;
  std::string refused;
  size_t refused_count = 0;
  for (const uint32_t pid : r.refused_rings)
    if (static_cast<int>(pid) != r.pid && ++refused_count <= kPidsListed)
      refused += (refused.empty() ? "" : ", ") + std::to_string(pid);
  if (refused_count > kPidsListed) refused += " and " + std::to_string(refused_count - kPidsListed) + " more";
  if (refused_count > 0)
    std::fprintf(stderr, "spoor record: not traced, no events from %zu process%s of the program's tree (pid%s %s): %s\n",
                 refused_count, refused_count == 1 ? "" : "es", refused_count == 1 ? "" : "s", refused.c_str(),
                 r.region_error.c_str());
  if (r.rings_limited_by != record::RingLimit::none) {
    const bool by_address = r.rings_limited_by == record::RingLimit::address_space;
    const std::string why =
        by_address ? "each process and spoor itself map them, within the address space limit (ulimit -v, " +
                         human_bytes(r.address_limit) + ")"
                   : "they fill while the file is slow, within the memory limit of spoor's cgroup (" +
                         human_bytes(r.memory_limit) + "), which the program shares";
    std::fprintf(stderr, "spoor record: rings of %s per CPU instead of %s: %s; --buffer-size sets them\n",
                 human_bytes(r.ring_bytes_per_cpu).c_str(), human_bytes(options.buffer_bytes_per_cpu).c_str(),
                 why.c_str());
  }
  for (const std::string& u : r.untraceable)
    std::fprintf(stderr, "spoor record: not traced, but it ran: %s\n", u.c_str());
  if (!r.never_attached.empty()) {
    std::string pids;
    for (const uint32_t pid : r.never_attached) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    const char* set = std::getenv("SPOOR_PRELOAD_LIB");
    const std::string library =
        set != nullptr && *set != '\0' ? "the library SPOOR_PRELOAD_LIB names, " + std::string(set) + "," : "the library";
    const bool one = r.never_attached.size() == 1;
    std::fprintf(stderr,
                 "spoor record: not traced, no events from %s (pid %s): %s libspoor-preload.so but never took "
                 "the rings spoor gave %s; %s is another Spoor build's (its format differs), or the rings could "
                 "not be taken (ulimit -v or a memory limit for their mapping, ulimit -n for their descriptor)\n",
                 one ? "it" : "them", pids.c_str(), one ? "it loaded" : "they loaded", one ? "it" : "them",
                 library.c_str());
  }
  for (const std::string& a : r.own_allocators)
    std::fprintf(stderr,
                 "spoor record: heap calls not recorded (the program's own malloc, which LD_PRELOAD cannot wrap; "
                 "its mmap calls are recorded): %s\n",
                 a.c_str());
  for (const std::string& s : r.samples_off)
    std::fprintf(stderr,
                 "spoor record: no CPU samples from %s: a debugger or tracer held it from its start, and would "
                 "have stopped at (or printed) each sample's signal; its other events are recorded\n",
                 s.c_str());
  if (r.perf_maps.maps > 0)
    std::fprintf(stderr, "spoor record: kept %u JIT symbol map%s (%s/perf-PID.map, %s) in the trace\n",
                 r.perf_maps.maps, r.perf_maps.maps == 1 ? "" : "s", options.perf_map_dir.c_str(),
                 human_bytes(r.perf_maps.bytes).c_str());
  for (const std::string& p : r.perf_maps.problems) std::fprintf(stderr, "spoor record: %s\n", p.c_str());
  if (r.kernel_opened)
    std::fprintf(stderr, "spoor record: kernel: %llu records, %llu lost%s\n",
                 static_cast<unsigned long long>(r.kernel_records), static_cast<unsigned long long>(r.kernel_lost),
                 r.kernel_lost ? " (the kernel's rings filled up: try a lower --sample-hz or --kernel-stack-size)" : "");
  // The count of traced processes; none ("0 processes, 2 events") read as
  // if the recording had failed, where the events are the recorder's own.
  const std::string processes = options.no_preload    ? ""
                                : r.processes == 0    ? "no process traced (the events are the recorder's own): "
                                : r.processes == 1    ? "1 process, "
                                                      : std::to_string(r.processes) + " processes, ";
  // After a failed write the events counted were taken from the rings,
  // not all written: the file says which it holds.
  std::fprintf(stderr, "spoor record: %s%llu %s%s, %llu lost%s, %s%s written to %s\n", processes.c_str(),
               static_cast<unsigned long long>(r.events), r.events == 1 ? "event" : "events",
               r.write_error.empty() ? "" : " taken from the rings",
               static_cast<unsigned long long>(r.lost), lost_reason(r).c_str(), r.write_error.empty() ? "" : "only ",
               human_bytes(r.file_bytes).c_str(), r.output_path == "-" ? "standard output" : r.output_path.c_str());
  if (!r.write_error.empty())
    std::fprintf(stderr,
                 "spoor record: %s; the trace ends after %llu bytes: it holds the events written before, which "
                 "spoor info and spoor report read up to the cut; the later ones are lost\n",
                 r.write_error.c_str(), static_cast<unsigned long long>(r.file_bytes));
  // After a failed write, runs packed before the failure was known count
  // too: more than the file holds, said so.
  if (r.compression.raw_bytes > 0)
    std::fprintf(stderr, "spoor record: zstd packed %s of blocks into %s (%.1fx) using %.2f s of CPU off the program's threads%s\n",
                 human_bytes(r.compression.raw_bytes).c_str(), human_bytes(r.compression.packed_bytes).c_str(),
                 static_cast<double>(r.compression.raw_bytes) / static_cast<double>(r.compression.packed_bytes),
                 r.compression.cpu_seconds,
                 !r.write_error.empty() && r.compression.packed_bytes > r.file_bytes
                     ? " (the file holds only what came before the cut)"
                     : "");
  std::fprintf(stderr, "spoor record: draining the rings took %.3f s of CPU\n", r.drain_cpu_seconds);
  if (!r.compression_problem.empty()) std::fprintf(stderr, "spoor record: %s\n", r.compression_problem.c_str());
  if (r.compression.fast_bytes > 0)
    std::fprintf(stderr, "spoor record: %s of them at zstd's fastest level: compression fell behind the program\n",
                 human_bytes(r.compression.fast_bytes).c_str());
  if (r.compression.stored_bytes > 0)
    std::fprintf(stderr, "spoor record: %s were written uncompressed: compression fell behind the program\n",
                 human_bytes(r.compression.stored_bytes).c_str());
  // Said only when the packing was made smaller and had work: its runs
  // and backlog are why a file under a limit comes out larger.
  if (r.packing.fitted && r.compression.raw_bytes + r.compression.stored_bytes > 0) {
    const uint32_t threads = r.packing.threads;
    std::fprintf(stderr,
                 "spoor record: packing kept within the memory limit of spoor's cgroup (%s): runs of %s, %s, "
                 "%s waiting at most before runs are written uncompressed\n",
                 human_bytes(r.memory_limit).c_str(), human_bytes(r.packing.run_bytes).c_str(),
                 threads == 0 ? "a thread per CPU"
                 : threads == 1 ? "1 thread"
                                : (std::to_string(threads) + " threads").c_str(),
                 human_bytes(r.packing.backlog_limit).c_str());
  }
  // The rings take up the wait; only lost events say they overflowed.
  if (r.compression.drain_wait_seconds >= 0.001)
    std::fprintf(stderr,
                 "spoor record: the drain waited %.3f s for packing and writing to catch up (%s of runs waiting is "
                 "the most it holds); %s\n",
                 r.compression.drain_wait_seconds, human_bytes(r.compression.memory_limit).c_str(),
                 r.lost > 0 ? "the rings filled meanwhile" : "the rings held what came meanwhile");
  if (r.abandoned_bytes)
    std::fprintf(stderr, "spoor record: %llu bytes were reserved by events the program never finished\n",
                 static_cast<unsigned long long>(r.abandoned_bytes));
  // Only for a file that holds something to report (not -o /dev/null, nor
  // a write that failed before the first byte).
  struct stat out{};
  if (r.output_path != "-" && stat(r.output_path.c_str(), &out) == 0 && S_ISREG(out.st_mode) && r.file_bytes > 0)
    std::fprintf(stderr, "spoor record: next: spoor report %s\n", r.output_path.c_str());
  return r.write_error.empty() ? r.exit_status : 127;
}

}  // namespace

const Command kRecordCommand{
    "record",
    "Run a program with tracing injected (LD_PRELOAD) and write its trace",
    R"(usage: spoor record [-o FILE] [-p PROVIDERS] [--stack-depth N] [--sample-hz N]
                    [--sample-clock task|timer] [--time-resolution NS] [--buffer-size SIZE]
                    [--wait-when-full] [--no-follow]
                    [--kernel LIST] [--kernel-all] [--kernel-stack-size N]
                    [--no-preload] [--compress zstd|none] [--no-rule-cache] [--] CMD [ARGS...]
       spoor record --pid PID[,PID...] [--duration SECONDS] [-o FILE] [--kernel LIST] [--sample-hz N]
                    [--kernel-stack-size N] [--compress zstd|none]

Runs CMD with libspoor-preload.so injected and records its events, and
those of every process it starts (fork, posix_spawn, exec), into FILE
(default spoor-<program>-<pid>.spoor). Each process gets rings of its own in
shared memory that spoor drains itself, so every event a process committed
reaches the file even if it crashes or is killed. The program's output and
behaviour are unchanged; spoor exits with the program's exit status (128+N
when signal N ended it) and prints a summary to stderr. Ctrl-C reaches the
program (and once it has ended, stops waiting for processes it left
running); SIGTERM and SIGHUP sent to spoor, and SIGINT and SIGQUIT sent to
spoor alone (kill, pkill, timeout -s INT), are passed on to the program.
Either way spoor finishes the file after the program ends.

With --pid, spoor records processes that are already running, through the
kernel's sources alone (nothing can be injected into them; --kernel-all
unless --kernel says): their threads and the threads and processes they
start from then on, until they end, --duration SECONDS pass, or Ctrl-C
(SIGINT, SIGTERM, SIGHUP) stops the recording, which leaves them running.
Processes they had started before are not recorded: spoor names them,
with the --pid list that would take them too. Default FILE:
spoor-pid-<pid>.spoor; spoor exits 0.

Events: heap (Spoor.Heap: Alloc, Free, Realloc with address, size and the
caller's stack; Mmap, Munmap, Mremap), file I/O (Spoor.IO: keyword 0x1 the
fd calls, 0x2 stdio, 0x4 stacks on reads and writes), the distinct stacks
(Spoor.Stack: Stack, written once each), and each process's life
(Spoor.Process: ProcessStart, ModuleLoad and ModuleUnload with build IDs,
Fork, Exec, ProcessExit with the exit code or signal, ProcessRunning for
a process still running as the recording ended, CommandStart and
CommandEnd around system() and popen()), threads (Spoor.Thread:
ThreadStart, ThreadEnd, ThreadName) and CPU samples (Spoor.Samples:
Sample, with the stack).

options:
  -o, --output FILE       where the trace goes; "-" is standard output (a
                          pipe or file, not a terminal), and the program's
                          standard output then goes to standard error
  -p, --providers SPEC    which providers, as Name[:KEYWORDS[:LEVEL]],...:
                          heap, io, thread, process, samples, stack (or
                          their full names, Spoor.Heap...); default *,
                          every provider. Stacks and the module map are
                          always in, or no stack could be read
  --stack-depth N         frames kept per stack, 1-128 (default 64)
  --sample-hz N           CPU samples per second of each thread's CPU time,
                          0-10000 (default 1000; 0: none)
  --time-resolution NS    the traced processes round each event's time down
                          to a multiple of the largest power of two of clock
                          ticks that lasts at most NS nanoseconds (default
                          20: 32 ticks, 12.3 ns, on a 2.6 GHz TSC); 0 keeps
                          every tick. Finer times are mostly the clock's
                          noise, and make a heap trace a quarter larger.
                          spoor info shows a trace's resolution
  --sample-clock CLOCK    what interrupts a thread for its samples: timer
                          (the default), a CPU-time timer, which the kernel
                          checks only at its tick (often 250 Hz): faster
                          rates give one sample per tick standing for
                          several periods; or task, the thread's task clock
                          from perf_event_open, a sample every period, for
                          up to 32 threads at once (one descriptor each, at
                          the top of the program's range; the timer where
                          the kernel does not allow it). The task clock
                          makes each context switch of a thread dearer
  --buffer-size SIZE      ring per CPU per process, like 4M (default 32M,
                          less under ulimit -v; while spoor keeps up, the
                          program writes only its first 4 MiB: the rest is
                          for when it does not)
  --wait-when-full        a thread whose ring is full waits for spoor to
                          drain it (50 us at a time, at most 200 ms for one
                          event) instead of dropping the event: no events
                          lost where the program outruns the recorder, at
                          the cost of slowing it down, as heaptrack does.
                          Default: never wait, count what is dropped
  --no-follow             trace the program only, not the processes it starts
  --kernel LIST           kernel sources through perf_event_open, for the
                          program and every thread and process it starts:
                          samples (CPU samples at --sample-hz with the
                          user registers and a stack copy, for DWARF
                          unwinding), switches (context switches, blocked
                          or preempted), faults (page faults with the
                          address), syscalls:NAME,NAME... (those syscalls
                          with arguments and return values; "syscalls"
                          alone: all), sched and block (machine-wide
                          sched_switch/sched_waking and block requests:
                          root or CAP_PERFMON; so are kernel stacks in
                          samples, whose functions the end of the
                          recording names from /proc/kallsyms). Events:
                          Spoor.Kernel, on the same timeline as the
                          program's. What this machine does not allow is
                          said on stderr, with what would enable it
  --kernel-all            every kernel source this machine allows
  --kernel-stack-size N   user stack bytes copied per kernel CPU sample,
                          0-65528 (default 32768 as root or with
                          CAP_PERFMON, else 16376, for the smaller ring
                          an unprivileged user may lock; 0: registers only)
  --no-preload            do not inject libspoor-preload.so: kernel sources
                          only (--kernel-all unless --kernel says), which
                          works for static and Go programs too
  --pid PID[,PID...]      record these running processes instead of a
                          command (see above)
  --duration SECONDS      with --pid: stop after this long
  --compress zstd|none    zstd (the default) packs runs of about 8 MiB of
                          blocks into COMPRESSED blocks, on a thread of the
                          recorder; none writes the blocks as they are
  --no-rule-cache         neither read nor write the unwind rule cache. By
                          default the stack unwinding rules a recording
                          builds (from each module's .eh_frame, keyed by
                          its build ID) are kept in
                          $XDG_CACHE_HOME/spoor/unwind-rules (else
                          ~/.cache/spoor/unwind-rules; $SPOOR_RULE_CACHE
                          names another file, or "off"), so the next
                          recording's processes find them instead of
                          building them: a program's first process in a
                          recording starts faster (node -e 0: ~30%). With
                          kernel samples or faults, /proc/kallsyms is kept
                          beside it (kallsyms, for this boot and these
                          modules) and is skipped with it

exit status: the program's (0 with --pid); 127 when it cannot be recorded
(not found, no such pid, cannot create FILE) or writing the trace failed
(a full disk, `ulimit -f`, a reader of -o - that went away: said when it
happens; the program runs on, untraced from then on, and the file keeps
what was written before); 2 for a usage error.
)",
    run_record_command};

}  // namespace spoor::cli
