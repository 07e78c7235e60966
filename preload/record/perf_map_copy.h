// Keeping a JIT's perf map in the trace. Runtimes that generate code (a
// JVM, node, CPython 3.12's perf trampolines) name it in /tmp/perf-PID.map,
// perf's convention, and nowhere else: a trace read on another machine,
// after a reboot, or after /tmp was cleaned would show that code as bare
// addresses. When a traced process has ended, the recorder copies its map
// into SYMBOL_MAP blocks (docs/FORMAT.md), and `spoor report` reads it from
// there first.
#ifndef SPOOR_PRELOAD_RECORD_PERF_MAP_COPY_H
#define SPOOR_PRELOAD_RECORD_PERF_MAP_COPY_H

#include <cstdint>
#include <string>
#include <vector>

#include "spoor/trace_writer.h"

namespace spoor::record {

struct PerfMapsKept {
  uint32_t maps = 0;
  uint64_t bytes = 0;
  std::vector<std::string> problems;  // "PATH: not kept: why"
};

// Copies `dir`/perf-`pid`.map into the trace when it is this recording's:
// a regular file (not followed through a symlink: /tmp is anyone's) of the
// recorder's user or root, under 1 GiB, last written no earlier than 2 s
// before `recording_started_realtime_ns` (an older file is another process's
// that had the pid). Nothing happens when there is no file.
void keep_perf_map(TraceWriter& writer, const std::string& dir, uint32_t pid,
                   int64_t recording_started_realtime_ns, PerfMapsKept& kept);

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_PERF_MAP_COPY_H
