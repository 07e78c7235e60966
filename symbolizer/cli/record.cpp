// spoor record: run a program under the preload shim and write its trace.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "record.h"

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

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(b));
  return buf;
}

int run_record_command(const std::vector<std::string>& words) {
  record::RecordOptions options;
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
      options.output_path = *v;
    } else if (w == "-p" || w == "--providers") {
      const std::string* v = value();
      if (!v) return usage_error("record", w + " needs a provider spec");
      options.providers = *v;
    } else if (w == "--stack-depth") {
      const std::string* v = value();
      const int n = v ? std::atoi(v->c_str()) : 0;
      if (n < 1 || n > 128) return usage_error("record", "--stack-depth needs a number of frames from 1 to 128");
      options.stack_depth = n;
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
    } else {
      return usage_error("record", "unknown option '" + w + "'");
    }
  }
  options.command.assign(words.begin() + static_cast<long>(i), words.end());
  if (options.command.empty()) return usage_error("record", "missing the command to run, as in: spoor record -- ./app");

  record::RecordResult r;
  std::string error;
  if (!record::run_record(options, &r, &error)) {
    std::fprintf(stderr, "spoor record: %s\n", error.c_str());
    return 127;
  }
  std::fprintf(stderr, "spoor record: '%s' (pid %d) %s after %.2f s\n", options.command[0].c_str(), r.pid,
               r.how_it_ended.c_str(), r.seconds);
  if (!r.preload_attached)
    std::fprintf(stderr,
                 "spoor record: the program never loaded libspoor-preload.so (a static or setuid "
                 "program ignores LD_PRELOAD): no events from it\n");
  std::fprintf(stderr, "spoor record: %llu events, %llu lost%s, %s written to %s\n",
               static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.lost),
               r.lost ? " (the ring was full: try a larger --buffer-size)" : "",
               human_bytes(r.file_bytes).c_str(), r.output_path.c_str());
  if (r.compression.raw_bytes > 0)
    std::fprintf(stderr, "spoor record: zstd packed %s of blocks into %s (%.1fx) using %.2f s of CPU off the program's threads\n",
                 human_bytes(r.compression.raw_bytes).c_str(), human_bytes(r.compression.packed_bytes).c_str(),
                 static_cast<double>(r.compression.raw_bytes) / static_cast<double>(r.compression.packed_bytes),
                 r.compression.cpu_seconds);
  if (r.compression.fast_bytes > 0)
    std::fprintf(stderr, "spoor record: %s of them at zstd's fastest level: compression fell behind the program\n",
                 human_bytes(r.compression.fast_bytes).c_str());
  if (r.compression.stored_bytes > 0)
    std::fprintf(stderr, "spoor record: %s were written uncompressed: compression fell behind the program\n",
                 human_bytes(r.compression.stored_bytes).c_str());
  if (r.abandoned_bytes)
    std::fprintf(stderr, "spoor record: %llu bytes were reserved by events the program never finished\n",
                 static_cast<unsigned long long>(r.abandoned_bytes));
  std::fprintf(stderr, "spoor record: next: spoor info %s\n", r.output_path.c_str());
  return r.exit_status;
}

}  // namespace

const Command kRecordCommand{
    "record",
    "Run a program with tracing injected (LD_PRELOAD) and write its trace",
    R"(usage: spoor record [-o FILE] [-p PROVIDERS] [--stack-depth N] [--buffer-size SIZE]
                    [--compress zstd|none] [--] CMD [ARGS...]

Runs CMD with libspoor-preload.so injected and records its events into FILE
(default spoor-<program>-<pid>.spoor). The rings live in shared memory that
spoor drains itself, so every event the program committed reaches the file
even if it crashes or is killed. The program's output and behaviour are
unchanged; spoor exits with the program's exit status (128+N when signal N
ended it) and prints a summary to stderr.

Events recorded today: heap (Spoor.Heap: Alloc, Free, Realloc with address,
size and the caller's stack) and the distinct stacks (Spoor.Stack: Stack,
written once each), from the program itself and its exec'ed images; its
children are not traced yet.

options:
  -o, --output FILE       where the trace goes
  -p, --providers SPEC    which providers, as Name[:KEYWORDS[:LEVEL]],...
                          (default *, every provider)
  --stack-depth N         frames kept per stack, 1-128 (default 64)
  --buffer-size SIZE      ring per CPU, like 4M (default 4M)
  --compress zstd|none    zstd (the default) packs runs of about 4 MiB of
                          blocks into COMPRESSED blocks, on a thread of the
                          recorder; none writes the blocks as they are

exit status: the program's; 127 when it cannot be recorded (not found,
cannot create FILE); 2 for a usage error.
)",
    run_record_command};

}  // namespace spoor::cli
