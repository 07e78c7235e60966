// What /proc says of processes: one process's state (proc_stat), and the
// processes still running below some (running_below), which spoor record
// names in ProcessRunning events as a recording ends.
#ifndef SPOOR_PRELOAD_RECORD_PROCESS_TREE_H
#define SPOOR_PRELOAD_RECORD_PROCESS_TREE_H

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace spoor::record {

// The start time of `pid` in clock ticks since boot (field 22 of
// /proc/<pid>/stat), its parent, and whether it is still running (not a
// zombie). An exec keeps the start time; a new process that reuses the
// pid has another. All zero when there is no such process.
struct ProcStat {
  bool running = false;
  uint32_t ppid = 0;
  uint64_t start_time = 0;
};
ProcStat proc_stat(uint32_t pid);

// The running processes whose parent, grandparent... is one of `roots`
// (not the roots themselves), in pid order: one pass over /proc.
std::vector<pid_t> running_below(const std::vector<pid_t>& roots);

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_PROCESS_TREE_H
