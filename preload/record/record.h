// spoor record: runs a program with libspoor-preload.so injected, follows
// the processes it starts, and drains their rings from this process into one
// trace file, the way ETW's session writer does. What a process committed
// reaches the file even when it crashes or is killed.
#ifndef SPOOR_PRELOAD_RECORD_H
#define SPOOR_PRELOAD_RECORD_H

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "packing_budget.h"
#include "perf_map_copy.h"
#include "ring_budget.h"
#include "time_grain.h"
#include "spoor/host/block_compressor.h"
#include "spoor/kernelsrc/attr_plan.h"
#include "spoor/kernelsrc/kernel_spec.h"

namespace spoor::record {

struct RecordOptions {
  std::vector<std::string> command;      // program and arguments
  std::string output_path;               // empty: spoor-<program>-<pid>.spoor
  std::string providers = "*";           // enable spec for the shim's providers
  int stack_depth = 64;                  // frames kept per stack, 1..128
  int sample_hz = 1000;                  // CPU samples per second of a thread's CPU time; 0: off
  double time_resolution_ns = kDefaultTimeResolutionNs;  // events' times rounded down to a power of two of ticks this long at most (time_grain.h); 0: every tick
  std::string sample_clock = "timer";    // "timer" (CPU-time timer) or "task" (perf task clock where allowed)
  bool no_follow = false;                // trace the program only, not its children
  bool wait_when_full = false;           // a writer that finds its ring full waits for the drain (bounded)
  // Per CPU, per process. Pages are touched only as used: while the drain
  // keeps up, the writers stay in the first 4 MiB (ring.cpp's
  // rewind_target); the rest is for when it stalls (bench/RESULTS.md).
  // Under an address-space limit (ulimit -v) the default is made smaller
  // (ring_budget.h) unless the size was given (--buffer-size).
  size_t buffer_bytes_per_cpu = 32u << 20;
  bool buffer_size_given = false;
  uint32_t packet_bytes = 128u << 10;
  bool compress = true;                  // zstd COMPRESSED blocks (docs/FORMAT.md)
  kernelsrc::KernelRequest kernel;       // kernel sources (perf_event_open); none by default
  uint32_t kernel_stack_bytes = kernelsrc::kStackBytesByPrivilege;  // user stack copied per kernel CPU sample
  bool no_preload = false;               // no shim: kernel sources only (static programs too)
  std::string perf_map_dir = "/tmp";    // where JIT runtimes write perf-PID.map (perf_map_copy.h)
  std::string rule_cache;                // unwind rules kept between recordings (rule_cache_file.h); "": none
  // Processes already running to record instead of a command (--pid):
  // kernel sources only, until they end, duration_seconds pass (0: no
  // limit) or spoor record is interrupted.
  std::vector<pid_t> attach_pids;
  double duration_seconds = 0;
};

struct RecordResult {
  std::string output_path;
  int pid = 0;
  int exit_status = 0;          // the program's, as a shell reports it (128+N for signal N)
  std::string how_it_ended;     // "exited with code 0", "killed by signal 9 (Killed)"
  bool preload_attached = false;  // false: the program never loaded the shim (static, setuid)
  // Why some process could not be given its rings ("cannot create a shared
  // region: ..."), the first one; "" when every process got them.
  std::string region_error;
  // Every process that could not be given its rings (the program too,
  // when it could not): none of their events are in the trace.
  std::vector<uint32_t> refused_rings;
  // The ring per CPU each process got, the recorder's address-space limit
  // (UINT64_MAX: none), and which limit made the rings smaller than asked.
  size_t ring_bytes_per_cpu = 0;
  uint64_t address_limit = UINT64_MAX;
  RingLimit rings_limited_by = RingLimit::none;
  // The memory limit of spoor's cgroup (UINT64_MAX: none), and the packing
  // sized for it.
  uint64_t memory_limit = UINT64_MAX;
  PackingBudget packing;
  // What compression could not do as asked ("1 of 2 packing threads
  // started (...)"), "" when nothing.
  std::string compression_problem;
  // Why the program itself cannot be traced, as its ELF headers tell before
  // it starts (program_image.h): "static binary", "AddressSanitizer build"...;
  // "" when they do not say.
  std::string program_untraceable;
  uint32_t processes = 0;         // processes traced (the program and its descendants)
  // Processes that loaded the shim and were given rings but never took
  // them (never attached): a shim of another Spoor build, whose region
  // format differs, or rings it could not map. Not in `processes`.
  std::vector<uint32_t> never_attached;
  std::vector<std::string> untraceable;  // programs exec'd in the tree that could not be traced
  std::vector<std::string> own_allocators;  // programs whose own malloc kept their heap calls from the hooks
  std::vector<std::string> samples_off;     // "PROGRAM (TRACER)": no CPU samples, ptrace held it from its start
  PerfMapsKept perf_maps;        // JIT symbol maps copied into the trace
  uint64_t events = 0;
  uint64_t lost = 0;
  uint64_t abandoned_bytes = 0;
  uint64_t file_bytes = 0;
  // What failed writing the trace ("writing 'F' failed: No space left on
  // device"), "" when it was written whole. The file then ends where the
  // failure was: a prefix the reader reads up to the cut.
  std::string write_error;
  host::CompressionStats compression{};  // zero when not compressed
  double seconds = 0;
  // Of `seconds`: from the start until the program was reaped; the rest is
  // the recorder finishing (last drains, packing what was still queued).
  double program_seconds = 0;
  // CPU time of the recorder's drain thread (its main thread) from the
  // program's start to the file's end: copying the rings out, checksums,
  // serving the processes. Packing is in compression.cpu_seconds.
  double drain_cpu_seconds = 0;
  bool kernel_opened = false;     // kernel sources were recorded
  uint64_t kernel_records = 0;    // Spoor.Kernel records (included in `events`)
  uint64_t kernel_lost = 0;       // kernel records dropped or unreadable (included in `lost`)
  // Calls of signal handlers that interrupted the shim and could not be
  // recorded there (included in `lost`; the rest of the processes' lost
  // events were dropped by full rings).
  uint64_t handler_calls_lost = 0;
  uint64_t pre_attach_calls_lost = 0;  // of lost: allocations before attach, past the pre-attach log
  // Of the processes attached to (--pid), how many ended while recorded;
  // how_it_ended then says why the others were not waited for.
  size_t attached_ended = 0;
};

// Runs options.command to completion. Returns false with *error set when
// the recording cannot start (no preload library, cannot create the
// output, the program cannot be executed); the program's own failure is
// not an error (see exit_status), nor a write that failed once it ran
// (see write_error).
bool run_record(const RecordOptions& options, RecordResult* result, std::string* error);

// Where libspoor-preload.so is: $SPOOR_PRELOAD_LIB, beside the build's
// spoor, or the installed copy. Empty when none exists.
std::string find_preload_library();

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_H
