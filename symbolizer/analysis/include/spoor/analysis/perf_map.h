// A JIT's symbol map in perf's format, perf-PID.map: one line per piece of
// code the runtime generated, "START SIZE NAME" with START and SIZE in hex
// (with or without 0x), appended as the code appears. Code freed and
// generated again at the same place gets a later line: the latest line
// holding an address names it.
#ifndef SPOOR_ANALYSIS_PERF_MAP_H
#define SPOOR_ANALYSIS_PERF_MAP_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spoor/symbolizer/symbolizer.h"

namespace spoor::analysis {

class PerfMap {
 public:
  // Parses the map's text. Lines that are not "START SIZE NAME" are
  // skipped and counted.
  void parse(std::string_view text);

  // The name the latest line holding `address` gives it; nullptr when no
  // line does. A binary search, then a look back over the lines that start
  // within the longest one's size below the address.
  const std::string* name_at(uint64_t address) const;

  size_t entries() const { return entries_.size(); }
  size_t skipped_lines() const { return skipped_; }

 private:
  struct Entry {
    uint64_t start = 0;
    uint64_t end = 0;
    uint32_t line = 0;  // later lines win
    std::string name;
  };
  std::vector<Entry> entries_;  // by start, then line
  uint64_t longest_ = 0;
  size_t skipped_ = 0;
};

// The recording's span in CLOCK_REALTIME ns, when the trace says (a map
// written outside it is another process's that had the pid).
struct RecordingSpan {
  bool known = false;
  int64_t first_realtime_ns = 0;
  int64_t last_realtime_ns = 0;
};

// `dir`/perf-`pid`.map, when it is there and this recording's: a regular
// file of the reader's user or root, under 1 GiB (as perf: /tmp is
// anyone's, and a FIFO would hang the read), written during `span` (from
// 2 s before its start to 60 s after its end). Null when there is none or
// it is not read; `problems` then gets why, unless there is no file.
std::unique_ptr<PerfMap> read_perf_map(const std::string& dir, uint32_t pid, const RecordingSpan& span,
                                       std::vector<symbolizer::ModuleProblem>& problems);

// The map from its text (kept in the trace: TraceModel::kept_perf_maps, or
// read from `path`); `problems` gets the lines skipped.
std::unique_ptr<PerfMap> parse_perf_map(const std::string& path, std::string_view text,
                                        std::vector<symbolizer::ModuleProblem>& problems);

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_PERF_MAP_H
