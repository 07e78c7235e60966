// How every subcommand opens a trace and reports what went wrong, so the
// messages read the same everywhere:
//   spoor: cannot read trace 'x.spoor': <problem>                  (exit 1)
//   spoor: trace 'x.spoor' is damaged at byte N: <problem>; M events recovered
#ifndef SPOOR_CLI_TRACE_REPORT_H
#define SPOOR_CLI_TRACE_REPORT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace spoor::cli {

// The trace at `path` ("-": standard input), or nullopt after printing why
// it cannot be read. It keeps at most kKeptExpandedMiB (or what
// SPOOR_READ_MEMORY_MIB says) of expanded COMPRESSED blocks besides those
// being read, so a command's memory does not grow with the trace's length:
// whatever outlives an event is copied out of it. 40 MiB keeps two blocks
// of the 16 MiB runs earlier versions of `spoor record` packed (~16.6 MiB
// expanded), four of its 8 MiB runs: with one, a block that two streams
// read in turns was expanded again by the reading thread.
inline constexpr uint64_t kKeptExpandedMiB = 40;
std::optional<reader::Trace> open_trace(const std::string& path);

// The same over bytes already read (a followed pipe), named `name` in the
// message.
std::optional<reader::Trace> trace_from_bytes(std::vector<uint8_t> bytes, const std::string& name);

// The block damage and the record damage the reader met, by file offset.
std::vector<reader::Damage> all_damage(const reader::Trace& trace,
                                       const reader::EventReader& events);

// Prints one line per damage to stderr (the first with the recovered event
// count). Returns kExitTrace when there is any, else kExitOk.
int report_damage(const std::string& path, const std::vector<reader::Damage>& damage,
                  uint64_t events_recovered);

// Collects output and writes it to stdout in large pieces.
class Output {
 public:
  Output() { buffer_.reserve(kFlushAt + 4096); }
  ~Output() { flush(); }
  std::string& buffer() { return buffer_; }
  // Call after each line; writes when enough has piled up.
  void maybe_flush() {
    if (buffer_.size() >= kFlushAt) flush();
  }
  void flush();

 private:
  static constexpr size_t kFlushAt = 1 << 16;
  std::string buffer_;
};

}  // namespace spoor::cli

#endif  // SPOOR_CLI_TRACE_REPORT_H
