// spoor_bench_sustained: can a session keep up with a steady event rate at
// its default buffer size? One producer thread writes 3-field events (two
// uint32 and a 5-byte string) at a target rate for a fixed time, pacing
// itself by checking the clock every 1000 events; the session uses
// SessionOptions' defaults except for the output path. At the end it prints
// one result line of key=value pairs (bench/run.sh parses it):
//
//   spoor_bench_sustained: written=... lost=... file_events=... rate=...
//     seconds=... file_bytes=... bytes_per_event=... producer_cpu_s=...
//     producer_preempted=... drainer_cpu_s=...
//
// The last three tell a busy machine from a slow tracer: the producer spins
// while early, so its CPU time should equal the run's length.
//
//   spoor_bench_sustained [--rate=EVENTS_PER_S] [--seconds=S] [--output=PATH]
//                         [--buffer-mb=MB]   (default: 10000000, 10,
//                          $SPOOR_BENCH_DIR or /tmp/spoor_bench_sustained.spoor,
//                          the SessionOptions default)
//
// Exit status: 0 when the run happened (whatever it measured), 1 when the
// session could not start, 2 for bad arguments. A benchmark, not a test.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

#include "spoor/event.h"
#include "spoor/host/session.h"

namespace {

SPOOR_DEFINE_PROVIDER(g_bench, "Spoor.Bench");

SPOOR_EVENT(kThreeFields, g_bench,
            (spoor::EventInfo{.name = "ThreeFields", .id = 1, .level = spoor::Level::info}),
            spoor::Field<uint32_t>{"a"}, spoor::Field<uint32_t>{"b"}, spoor::Field<spoor::Str>{"s"});

constexpr uint64_t kPaceEvery = 1000;

struct Options {
  double rate = 10e6;
  double seconds = 10;
  std::string output;
  size_t buffer_bytes = 0;  // 0: the SessionOptions default
};

bool parse_number(std::string_view text, double* out) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !(v > 0)) return false;
  *out = v;
  return true;
}

bool parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value_of = [&](std::string_view flag, std::string_view* value) {
      if (arg.substr(0, flag.size()) != flag) return false;
      *value = arg.substr(flag.size());
      return true;
    };
    std::string_view v;
    double mb = 0;
    if (value_of("--rate=", &v)) {
      if (!parse_number(v, &o->rate)) return false;
    } else if (value_of("--seconds=", &v)) {
      if (!parse_number(v, &o->seconds)) return false;
    } else if (value_of("--output=", &v)) {
      o->output = v;
    } else if (value_of("--buffer-mb=", &v)) {
      if (!parse_number(v, &mb)) return false;
      o->buffer_bytes = static_cast<size_t>(mb * (1 << 20));
    } else {
      return false;
    }
  }
  return true;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

struct ProducerResult {
  uint64_t written = 0;
  double seconds = 0;
  double cpu_seconds = 0;     // the producer thread's own CPU time
  long preempted = 0;         // its involuntary context switches
};

double seconds_of(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; }

// Event n is due at start + n / rate; after every kPaceEvery events the
// producer spins until the next one is due (or carries on at once when it is
// behind, so a slow write path shows as a lower achieved rate).
ProducerResult produce(double rate, double seconds) {
  using clock = std::chrono::steady_clock;
  const uint64_t total = static_cast<uint64_t>(rate * seconds);
  const double ns_per_event = 1e9 / rate;
  ProducerResult result;
  const clock::time_point start = clock::now();
  uint64_t n = 0;
  while (n < total) {
    const uint64_t batch_end = n + kPaceEvery < total ? n + kPaceEvery : total;
    for (; n < batch_end; ++n) kThreeFields.write(static_cast<uint32_t>(n), 42u, "hello");
    const clock::time_point due =
        start + std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(n) * ns_per_event));
    while (clock::now() < due) cpu_relax();
  }
  result.written = n;
  result.seconds = std::chrono::duration<double>(clock::now() - start).count();
  // The producer spins while it is early, so it should be on a CPU for the
  // whole run: CPU time well below wall time, or many involuntary switches,
  // mean other processes took its CPU (a busy machine, not a slow tracer).
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  result.cpu_seconds = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) == 0) result.preempted = ru.ru_nivcsw;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_args(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: spoor_bench_sustained [--rate=EVENTS_PER_S] [--seconds=S] [--output=PATH] "
                 "[--buffer-mb=MB]\n");
    return 2;
  }
  if (o.output.empty()) {
    const char* dir = std::getenv("SPOOR_BENCH_DIR");
    o.output = std::string(dir && *dir ? dir : "/tmp") + "/spoor_bench_sustained.spoor";
  }

  spoor::host::SessionOptions session_options;
  session_options.output_path = o.output;
  session_options.providers = "Spoor.Bench";
  if (o.buffer_bytes != 0) session_options.buffer_bytes_per_cpu = o.buffer_bytes;
  std::fprintf(stderr,
               "spoor_bench_sustained: %.0f events/s for %.1f s, buffer %zu bytes per CPU, "
               "packets of %u bytes, to %s\n",
               o.rate, o.seconds, session_options.buffer_bytes_per_cpu, session_options.packet_bytes,
               o.output.c_str());

  std::string error;
  auto session = spoor::host::Session::start(session_options, &error);
  if (!session) {
    std::fprintf(stderr, "spoor_bench_sustained: cannot start the session: %s\n", error.c_str());
    return 1;
  }
  ProducerResult produced;
  std::thread producer([&] { produced = produce(o.rate, o.seconds); });
  producer.join();
  const spoor::host::SessionStats stats = session->stop();
  // Everything but the producer: the session's writer thread (draining,
  // checksumming, writing the file) and main, which only waits.
  rusage self;
  getrusage(RUSAGE_SELF, &self);
  const double process_cpu = seconds_of(self.ru_utime) + seconds_of(self.ru_stime);

  const double achieved = produced.seconds > 0 ? static_cast<double>(produced.written) / produced.seconds : 0;
  const double bytes_per_event =
      stats.events > 0 ? static_cast<double>(stats.bytes) / static_cast<double>(stats.events) : 0;
  std::printf(
      "spoor_bench_sustained: written=%llu lost=%llu file_events=%llu rate=%.0f target_rate=%.0f "
      "seconds=%.3f file_bytes=%llu bytes_per_event=%.2f buffer_bytes_per_cpu=%zu "
      "producer_cpu_s=%.3f producer_preempted=%ld drainer_cpu_s=%.3f\n",
      static_cast<unsigned long long>(produced.written), static_cast<unsigned long long>(stats.lost),
      static_cast<unsigned long long>(stats.events), achieved, o.rate, produced.seconds,
      static_cast<unsigned long long>(stats.bytes), bytes_per_event, session_options.buffer_bytes_per_cpu,
      produced.cpu_seconds, produced.preempted, process_cpu - produced.cpu_seconds);
  if (stats.events + stats.lost != produced.written)
    std::fprintf(stderr,
                 "spoor_bench_sustained: warning: %llu written but the file holds %llu and %llu were "
                 "counted lost\n",
                 static_cast<unsigned long long>(produced.written),
                 static_cast<unsigned long long>(stats.events), static_cast<unsigned long long>(stats.lost));
  return 0;
}
