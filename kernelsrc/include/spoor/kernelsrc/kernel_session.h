// The kernel sources of one recording: opens the planned perf events on
// every CPU for the program's process tree (and machine-wide ones when
// privileged), drains their rings and writes what they hold as Spoor.Kernel
// records on the recorder's kernel streams, one per CPU.
//
// Usage (spoor record): fork the program and hold it before exec; open(pid);
// let it exec; describe(); then drain() in the recorder's loop and end() at
// the finish. Single-threaded: the recorder's drain loop owns it.
#ifndef SPOOR_KERNELSRC_KERNEL_SESSION_H
#define SPOOR_KERNELSRC_KERNEL_SESSION_H

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spoor/format.h"
#include "spoor/kernelsrc/attr_plan.h"
#include "spoor/trace_writer.h"

namespace spoor::kernelsrc {

// CLOCK_MONOTONIC nanoseconds (the kernel's record times) to the trace's
// ticks, with the trace's clock calibration.
struct TickConversion {
  format::ClockBlock clock{};
  uint64_t ticks(uint64_t monotonic_ns) const;
};

// What this process may do with perf_event_open: perf_event_paranoid, and
// root or CAP_PERFMON / CAP_SYS_ADMIN in its effective set.
Privilege current_privilege();

struct KernelTotals {
  uint64_t records = 0;   // Spoor.Kernel records written
  uint64_t lost = 0;      // records the kernel dropped (rings full) or that could not be parsed
  uint64_t corrupt = 0;   // of those, records whose layout was not as expected
};

// The thread IDs of process `pid` (/proc/PID/task), in order; empty when
// there is no such process.
std::vector<pid_t> task_ids(pid_t pid);

class KernelSession {
 public:
  KernelSession();
  ~KernelSession();
  KernelSession(const KernelSession&) = delete;
  KernelSession& operator=(const KernelSession&) = delete;

  // Plans and opens the events for process `pid` (held before its exec)
  // on `cpus` CPUs. Returns false with *error when nothing could be opened
  // (perf_event_open refused even the side-band event); what is partly
  // unavailable is in messages(), the recording goes on without it.
  bool open(const PlanOptions& options, pid_t pid, uint32_t cpus, std::string* error);

  // Lines for stderr: what is unavailable and why, fallbacks, notes.
  const std::vector<std::string>& messages() const { return messages_; }
  bool opened() const;

  // Attaches to processes already running (spoor record --pid): the
  // planned events for each of their threads, on at once, and through
  // inherit for the threads and processes they start from then on. False
  // with *error when a pid names no process or nothing could be opened.
  bool attach(const PlanOptions& options, const std::vector<pid_t>& pids, uint32_t cpus, std::string* error);

  // Reads /proc/<pid>/maps now (right after the exec, or the attach): the
  // mappings made before the events were enabled, written as Mmap events
  // at the next drain unless the kernel reported them itself; with
  // `with_threads`, its threads' names too, as Comm records. Once per
  // process.
  void snapshot_maps(pid_t pid, uint64_t ticks_now, bool with_threads = false);

  // STREAM blocks of the kernel streams first_stream.. (one per CPU, then
  // one for the Session, BlockDevice and snapshot Mmap records), owned by
  // process `recorder_pid`. Returns how many streams it took.
  uint32_t describe(TraceWriter& writer, uint32_t first_stream, uint32_t recorder_pid);
  // Reads everything the rings hold and converts into records, in time
  // order, what is older than a moment (4 ms: the rest waits for records
  // the kernel stamped earlier and writes later; time_order.h); a packet is
  // written when it fills (64 KiB) or at flush().
  void drain(TraceWriter& writer, const TickConversion& clock);
  // Writes the open packets (the recorder does every 250 ms, as for its rings).
  void flush(TraceWriter& writer);
  // Last drain (everything held too), the names of the kernel functions
  // the recording saw (KernelSymbol: /proc/kallsyms read once, ~42 ms
  // here, or the copy an earlier recording of this boot kept,
  // kallsyms_cache.h; only when a kernel address was seen), then the
  // streams' ends with their lost counts.
  void end(TraceWriter& writer, const TickConversion& clock);

  KernelTotals totals() const;

  // Ends the events and unmaps the rings, after end(); the tracepoints'
  // slow teardown happens in a child process once this one has gone
  // (event_release.h), so call it when nothing else is left to wait for.
  // The destructor closes them here otherwise.
  void close_events();

 private:
  bool open_tasks(const PlanOptions& options, const std::vector<pid_t>& tasks, uint32_t cpus, std::string* error);
  // The events every task has, for a thread found after the others.
  void open_task(pid_t tid);
  // Converts what is stamped at or before up_to_ns (CLOCK_MONOTONIC).
  void drain_up_to(TraceWriter& writer, const TickConversion& clock, uint64_t up_to_ns, uint64_t now_ns);
  void write_kernel_symbols(TraceWriter& writer, const TickConversion& clock);

  struct State;
  std::unique_ptr<State> state_;
  std::vector<std::string> messages_;
};

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KERNEL_SESSION_H
