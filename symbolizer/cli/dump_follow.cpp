#include "dump_follow.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "command.h"
#include "live_recorder.h"
#include "spoor/reader/event_reader.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kShortestWait = std::chrono::milliseconds(200);
constexpr size_t kHeaderBytes = 32;  // a trace shorter than its header has just begun

// The passes over a growing trace. Each pass decodes the trace from its
// start and prints, per stream, the events past those an earlier pass
// printed: a stream's events are the same, in the same order, in every
// longer prefix of the file (blocks are whole or not used at all). Each
// pass is in time order; across passes an event can come after later ones
// of other streams, by up to the recorder's flush (250 ms). Times are
// converted with the CLOCK blocks read so far.
class Passes {
 public:
  Passes(const EventLines& lines, std::string name) : lines_(lines), name_(std::move(name)) {}

  // Prints the new events of `trace`. The exit status once the recording
  // has finished, or on the `last` pass (the input ended): the damage the
  // whole dump would report. nullopt while the recording goes on.
  std::optional<int> pass(const reader::Trace& trace, bool last) {
    const auto start = Clock::now();
    Output out;
    layout_.widen_to(TextLayout(trace));
    std::unordered_map<uint32_t, uint64_t> seen;
    reader::EventReader events(trace);
    reader::Event e;
    while (events.next(e)) {
      if (++seen[e.stream_id] <= printed_[e.stream_id]) continue;
      // The header with the first event: by then the trace has described
      // the providers its columns are sized for.
      if (!header_printed_) {
        lines_.header(layout_, out.buffer());
        header_printed_ = true;
      }
      lines_.line(layout_, e, out.buffer());
      out.maybe_flush();
    }
    const bool done = last || recording_finished(trace);
    if (done && !header_printed_) lines_.header(layout_, out.buffer());  // no event at all: the header alone, as a dump
    out.flush();
    printed_ = std::move(seen);
    last_took_ = Clock::now() - start;
    if (done) return report_damage(name_, all_damage(trace, events), events.events_read());
    return std::nullopt;
  }

  // How long to wait before the next pass: a pass decodes the whole trace
  // again, so at most a fifth of the time goes to reading it.
  Clock::duration wait() const { return std::max<Clock::duration>(kShortestWait, 4 * last_took_); }

 private:
  const EventLines& lines_;
  std::string name_;
  std::unordered_map<uint32_t, uint64_t> printed_;  // per stream: its first events, printed
  bool header_printed_ = false;
  TextLayout layout_;  // never narrower than a pass before
  Clock::duration last_took_{};
};

}  // namespace

int follow_file(const std::string& path, const EventLines& lines) {
  Passes passes(lines, path);
  uint64_t last_size = 0;
  uint32_t recorder = 0;
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
    // The recorder gone and the file no longer growing: what it wrote is
    // all there is. The last pass printed it; a final one reports it.
    const bool gone = size == last_size && recorder_gone(recorder);
    if ((size < kHeaderBytes || size == last_size) && !gone) {
      std::this_thread::sleep_for(kShortestWait);
      continue;
    }
    last_size = size;
    std::optional<reader::Trace> trace = open_trace(path);
    if (!trace) return kExitTrace;
    if (gone)
      std::fprintf(stderr, "spoor dump: the recorder writing '%s' (pid %u) is gone: the recording did not finish\n",
                   path.c_str(), recorder);
    if (std::optional<int> status = passes.pass(*trace, gone)) return gone ? kExitTrace : *status;
    recorder = recorder_pid(*trace);
    std::this_thread::sleep_for(passes.wait());
  }
}

int follow_pipe(int fd, const EventLines& lines) {
  const std::string name = "-";
  Passes passes(lines, name);
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> chunk(1 << 20);
  bool grown = false;
  auto next_pass = Clock::now();
  for (;;) {
    pollfd ready{fd, POLLIN, 0};
    const int waited = poll(&ready, 1, static_cast<int>(kShortestWait.count()));
    bool ended = false;
    if (waited > 0) {
      const ssize_t n = read(fd, chunk.data(), chunk.size());
      if (n > 0) {
        bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + n);
        grown = true;
      } else if (n == 0) {
        ended = true;
      } else if (errno != EINTR && errno != EAGAIN) {
        std::fprintf(stderr, "spoor dump: cannot read standard input: %s\n", std::strerror(errno));
        return kExitTrace;
      }
    } else if (waited < 0 && errno != EINTR) {
      std::fprintf(stderr, "spoor dump: cannot wait for standard input: %s\n", std::strerror(errno));
      return kExitTrace;
    }
    if (!ended && (!grown || Clock::now() < next_pass)) continue;
    if (bytes.size() < kHeaderBytes && !ended) continue;
    // The reader keeps what it is given: each pass reads a copy of the
    // bytes so far (copying is far cheaper than the decoding).
    std::optional<reader::Trace> trace = trace_from_bytes(bytes, name);
    if (!trace) return kExitTrace;
    if (std::optional<int> status = passes.pass(*trace, ended)) return *status;
    grown = false;
    next_pass = Clock::now() + passes.wait();
  }
}

}  // namespace spoor::cli
