// spoor::exporter: what the export writers take. Plain structs, filled from
// a trace by the CLI (symbolizer/cli/export_model_from_trace.cpp) or by hand
// in tests, so each writer is testable without a trace.
//
// Stacks and locations are tables shared by every process: a Location is one
// runtime address in one module with its inline chain, a Stack lists
// Location indexes leaf first (the order an unwinder gives them).
#ifndef SPOOR_EXPORT_EXPORT_MODEL_H
#define SPOOR_EXPORT_EXPORT_MODEL_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace spoor::exporter {

struct Process {
  uint32_t pid = 0;
  std::string name;                   // "" when unknown
  std::vector<std::string> cmdline;
  std::string exe;                    // the last image's executable file, "" when unknown
};

struct Thread {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string name;  // "" when unknown
};

// An interval on a thread: an I/O operation, a start/stop activity.
struct Slice {
  uint32_t pid = 0;
  uint32_t tid = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;  // >= begin_ns
  std::string name;
  std::string category;                                    // provider, "io", ...
  std::vector<std::pair<std::string, std::string>> args;  // shown beside the slice
};

// A point in time on a thread (a fork, an exec, a signal).
struct Instant {
  uint32_t pid = 0;
  uint32_t tid = 0;
  int64_t time_ns = 0;
  std::string name;
  std::string category;
};

// An arrow from one slice to another, across threads: a wakeup, from the
// waker's slice at the wakeup to the woken thread's slice where it next ran.
// Its id in the written file is its index + 1.
struct Flow {
  uint32_t from = 0;  // index into ExportModel::slices
  uint32_t to = 0;
};

// One value of a per-process counter track (the heap size in bytes).
struct CounterValue {
  uint32_t pid = 0;
  int64_t time_ns = 0;
  int64_t value = 0;
};

struct Counter {
  std::string name;  // "heap size"
  std::string unit;  // "bytes" (perfetto knows bytes and count), "" for none
  std::vector<CounterValue> values;  // in time order
};

// A module mapped into a process (Spoor.Process ModuleLoad).
struct Module {
  uint32_t pid = 0;
  std::string path;
  std::string build_id;  // hex, "" when none
  uint64_t start = 0;    // first mapped byte
  uint64_t limit = 0;    // one past the last mapped byte
  uint64_t bias = 0;     // runtime address - ELF virtual address
};

// One function of a location's inline chain.
struct Frame {
  std::string function;  // "" when unknown
  std::string file;      // "" when unknown
  uint32_t line = 0;     // 0 when unknown
};

inline constexpr uint32_t kNoModule = UINT32_MAX;

struct Location {
  uint32_t module = kNoModule;  // index into ExportModel::modules
  uint64_t address = 0;         // runtime
  // Innermost (most deeply inlined) first; the last frame is the function
  // that owns the address. Empty when not symbolized.
  std::vector<Frame> frames;
};

struct Stack {
  std::vector<uint32_t> locations;  // indexes into ExportModel::locations, leaf first
};

struct CpuSample {
  uint32_t pid = 0;
  uint32_t tid = 0;
  int64_t time_ns = 0;
  uint32_t stack = 0;  // index into ExportModel::stacks
  uint32_t periods = 1;  // sampling periods of CPU time it stands for (a late timer's overruns)
};

// The heap at one stack, over the whole trace.
struct AllocationSite {
  uint32_t stack = 0;  // index into ExportModel::stacks
  uint64_t alloc_calls = 0;
  uint64_t alloc_bytes = 0;
  uint64_t live_blocks = 0;  // allocated here and not freed by the end of the trace
  uint64_t live_bytes = 0;
};

struct ExportModel {
  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<Slice> slices;
  std::vector<Instant> instants;
  std::vector<Flow> flows;
  std::vector<Counter> counters;
  std::vector<Module> modules;
  std::vector<Location> locations;
  std::vector<Stack> stacks;
  std::vector<CpuSample> cpu_samples;
  std::vector<AllocationSite> allocations;
  int64_t sample_period_ns = 0;  // CPU time per sampling period; 0 when unknown
  int64_t first_ns = 0;          // time span of the trace
  int64_t last_ns = 0;
};

// The name a frame is shown under: the function, or `module+0xoffset` when
// the address has no symbol, or `0xaddress` outside every module.
std::string frame_label(const ExportModel& model, const Location& location, const Frame* frame);

// A stack's frames root first, inline frames expanded (the caller before
// the functions inlined into it), as folded stacks and flame graphs want them.
std::vector<std::string> stack_labels_root_first(const ExportModel& model, const Stack& stack);

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_EXPORT_MODEL_H
