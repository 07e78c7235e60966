// spoor::analysis: a trace as the processes, images, modules, threads and
// stacks it describes, built in one pass over its events (load.h). `spoor
// report` and `spoor export` read the same model; the analyses (heap, io,
// cpu, custom events) ride the same pass as visitors.
//
// Names follow the Spoor.Process, Spoor.Thread and Spoor.Stack providers
// (preload/process_events.h, preload/shim/thread_provider.h,
// preload/shim/stack_table.h).
#ifndef SPOOR_ANALYSIS_MODEL_H
#define SPOOR_ANALYSIS_MODEL_H

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "spoor/reader/model.h"
#include "spoor/reader/stream_stats.h"

namespace spoor::analysis {

// Indexes into TraceModel's vectors.
using ProcessIndex = uint32_t;
using ImageIndex = uint32_t;
using ThreadIndex = uint32_t;
inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// A stack as events name it: stack IDs are per process and per image (an
// exec starts a fresh table, a fork child writes its own), so the key is
// the model's image index beside the ID. 0 is "no stack" (ID 0).
using StackKey = uint64_t;
inline constexpr StackKey stack_key(ImageIndex image, uint32_t id) {
  return id == 0 ? 0 : (static_cast<uint64_t>(image) << 32) | id;
}
inline constexpr ImageIndex stack_image(StackKey key) { return static_cast<ImageIndex>(key >> 32); }
inline constexpr uint32_t stack_id(StackKey key) { return static_cast<uint32_t>(key); }

inline constexpr int64_t kNeverNs = std::numeric_limits<int64_t>::max();

// A mapped ELF (ModuleLoad): addresses in it minus `bias` are addresses in
// the file.
struct Module {
  std::string path;
  std::vector<uint8_t> build_id;
  uint64_t bias = 0;
  uint64_t start = 0;
  uint64_t size = 0;
  int64_t load_ns = 0;
  int64_t unload_ns = kNeverNs;  // ModuleUnload's time; kNeverNs while mapped
  // Its bytes from `start` as recorded (ModuleImage: the vDSO, which has no
  // file); empty when the file on disk is to be read.
  std::vector<uint8_t> image;

  bool contains(uint64_t address) const { return address >= start && address - start < size; }
};

// One image of a process: the program it ran from a ProcessStart (or from
// its first event, when the trace has no ProcessStart) to the next exec or
// its end.
struct Image {
  ProcessIndex process = kNone;
  uint32_t pid = 0;
  uint32_t exec_count = 0;  // 0 for the first image, 1 after one exec, ...
  bool started = false;     // a ProcessStart described it
  std::string exe;          // ProcessStart's exe and cwd; "" when unknown
  std::string cwd;
  // Its PROCESS block's (each traced image announces itself once); when
  // the blocks and images of a pid do not pair up one to one, only the
  // last image has one (the last block) and exe says what the others ran.
  std::vector<std::string> command_line;
  // The kernel's name for the program at the exec that started this image
  // (a Comm record of --kernel: the file name, cut to 15 bytes); "" when
  // none came. With --no-preload it is all that names an image; exe is
  // then the first mapped file whose name it begins, when one is.
  std::string comm;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // How long the preloaded library's start took in it (ShimStarted: its
  // constructor, or a fork child's joining the recording); -1 when unknown.
  int64_t shim_start_ns = -1;
  std::vector<Module> modules;  // in load order

  // The module holding `address` at `time_ns` (kNeverNs: any time); the
  // latest loaded when several match. nullptr when none does.
  const Module* module_at(uint64_t address, int64_t time_ns = kNeverNs) const;
};

// How a process ended (ProcessExit: from its own stream as it exited, its
// parent's as it reaped it, or the recorder's).
struct ProcessEnd {
  int64_t time_ns = 0;
  int32_t exit_code = 0;  // valid when signal is 0
  uint8_t signal = 0;
  bool core_dumped = false;
  bool by_itself = false;  // only the process's own word so far (no reaper's)
  // False when only the kernel saw it end (the Exit record of its main
  // thread, --kernel without the preload) and no exit_group call of it
  // was recorded: ended, how unknown (exit_code and signal are 0).
  bool how_known = true;
};

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string name;                       // PROCESS block (comm)
  std::vector<std::string> command_line;  // the last PROCESS block's (the last image's)
  std::vector<ImageIndex> images;         // in exec order
  std::vector<ThreadIndex> threads;       // in start order
  std::vector<uint32_t> forked;           // child pids, from Fork events
  std::vector<std::string> exec_failures; // "path: errno N" of ExecFailed (path from Exec)
  std::string untraceable_exec;           // Exec's reason its new image is not traced
  // SamplerOff: "NAME (pid N)" of the debugger or tracer that held an image
  // of it from its start, which got no CPU samples.
  std::string samples_off_under;
  int64_t start_ns = kNeverNs;            // first event or ProcessStart
  bool start_known = true;                // false: no event, Fork or end told when it began
  int64_t end_ns = 0;                     // ProcessExit, else its last event
  std::optional<ProcessEnd> end;
  // What --kernel recorded of its end, used when nothing else tells it:
  // its main thread's Exit record, and the status its exit_group call
  // passed (the low 8 bits, as a waiting parent sees them).
  int64_t kernel_exit_ns = kNeverNs;
  std::optional<int32_t> exit_group_status;
  // No end, and the recorder found it still running as the recording
  // ended (ProcessRunning).
  bool running_at_end = false;
  uint64_t events = 0;
  // The recorder's own process ("spoor record"): it writes the ProcessExit
  // events of the processes it reaps and nothing else.
  bool recorder = false;
};

struct ThreadInfo {
  ProcessIndex process = kNone;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t parent_tid = 0;         // ThreadStart's; 0 for the main thread or unknown
  std::vector<std::string> names;  // ThreadName's, in order (a rename adds one)
  int64_t start_ns = 0;            // ThreadStart, else its first event
  int64_t end_ns = 0;              // ThreadEnd, else the process's end
  bool started = false;            // a ThreadStart described it
  bool ended = false;              // a ThreadEnd described it
  bool with_process = false;       // ... as ending with its process (it was still running)
  // Its CPU time by its own clock (which runs on across exec) at its end:
  // ThreadEnd's, or for a thread that exec'd, Exec's. 0 when not told.
  uint64_t cpu_ns = 0;
  // The same clock as Spoor began watching it (ThreadStart's; 0 when not
  // told): near 0 for a new thread; for the main thread of an image, the
  // dynamic loader's work and every earlier image's.
  uint64_t cpu_ns_at_start = 0;
  // For the main thread of an image exec'd by a traced one: that image's
  // thread's cpu_ns, the part of cpu_ns_at_start it was traced for.
  uint64_t cpu_ns_earlier_images = 0;
  // What it used while traced (cpu_ns less cpu_ns_at_start; 0 without an
  // end's clock), and before, untraced (the loader's work, an untraced
  // earlier image's).
  uint64_t traced_cpu_ns() const { return cpu_ns > cpu_ns_at_start ? cpu_ns - cpu_ns_at_start : 0; }
  uint64_t untraced_cpu_ns() const {
    return cpu_ns_at_start > cpu_ns_earlier_images ? cpu_ns_at_start - cpu_ns_earlier_images : 0;
  }
  uint64_t events = 0;

  // The last name, or "" when it has none.
  const std::string& name() const;
};

// A Stack event's frames: 64-bit little-endian addresses, innermost first,
// in the model's own storage (TraceModel::keep_frames).
struct StackFrames {
  std::span<const uint8_t> bytes;

  size_t size() const { return bytes.size() / 8; }
  uint64_t operator[](size_t i) const {
    uint64_t v;
    std::memcpy(&v, bytes.data() + i * 8, 8);  // little-endian hosts only, as the format
    return v;
  }
};

// Where the reader stopped making sense, and what the recording lost.
struct TraceHealth {
  std::vector<reader::Damage> damage;  // block and record damage, by offset
  std::vector<reader::StreamStats> streams;
  uint64_t lost_events = 0;            // summed over streams
  std::vector<std::string> warnings;   // the reader's
};

// How the kernel's CPU samples (Spoor.Kernel CpuSample) were unwound while
// loading (spoor/unwind/process_unwinder.h), and why walks stopped short.
struct KernelUnwindSummary {
  uint64_t dwarf = 0;          // by libdw's CFI unwinder over the copied stack
  uint64_t frame_pointer = 0;  // by the kernel's frame-pointer callchain
  uint64_t pc_only = 0;        // nothing to unwind: the sampled pc alone
  uint64_t frames = 0;         // over every sample
  uint64_t in_kernel = 0;      // samples taken in the kernel (with kernel frames)
  // Why DWARF walks stopped before the outermost frame, addresses masked
  // ("the stack copy (N bytes from sp 0x…) ends before the caller's frame at 0x…: …"), with how often.
  std::map<std::string, uint64_t> stops;
  // Of those, walks that stopped because the caller's frame lay above the
  // end of the stack copy, and the largest copy any sample had (bytes).
  uint64_t stack_copy_short = 0;
  uint64_t largest_stack_copy = 0;
  // Modules the unwinder could not use (file missing, build ID differs),
  // once per file and message: (path, message).
  std::vector<std::pair<std::string, std::string>> module_problems;
};

// Stack IDs the loader gives the unwound stacks of kernel samples: far
// above the preload's per-process counters, so the keys never collide.
inline constexpr uint32_t kUnwoundStackIdBase = 0x80000000u;

// A kernel function the recorder named (Spoor.Kernel KernelSymbol, from
// /proc/kallsyms, read while it recorded): it holds the addresses from its
// start to the next one's.
struct KernelSymbolEntry {
  uint64_t address = 0;
  std::string name;
  std::string module;  // "" for the kernel image
};

// Kernel addresses are the top half of the address space (x86-64,
// aarch64, riscv64 alike); user space never reaches them.
inline bool is_kernel_address(uint64_t address) { return (address >> 63) != 0; }

struct TraceModel {
  std::vector<ProcessInfo> processes;  // PROCESS block order, then first seen
  std::vector<Image> images;
  std::vector<ThreadInfo> threads;
  std::unordered_map<StackKey, StackFrames> stacks;
  TraceHealth health;
  uint64_t events = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  // CLOCK_REALTIME minus CLOCK_MONOTONIC when the trace recorded both
  // (has_realtime): event times as wall-clock times, to tell whether a
  // file on disk was written during the recording.
  bool has_realtime = false;
  int64_t realtime_minus_monotonic_ns = 0;
  // JIT symbol maps the recorder kept in the trace (perf_map.h), by pid;
  // the text is shared by copies of the model.
  struct KeptPerfMap {
    std::string path;  // where it was read at recording time
    std::shared_ptr<const std::string> text;
  };
  std::unordered_map<uint32_t, KeptPerfMap> kept_perf_maps;
  // The CPU sampler's rate (Spoor.Samples SamplerStart, the first one: one
  // spoor record samples every process at one rate); 0 when the trace does
  // not say (sampling off, or a trace older than the event).
  uint32_t sample_hz = 0;
  KernelUnwindSummary kernel_unwind;
  // Sorted by address; empty for a trace that names none.
  std::vector<KernelSymbolEntry> kernel_symbols;
  // The bytes behind `stacks`: Stack events' frames copied out of the
  // trace (whose expanded blocks come and go while it is read) and the
  // unwound stacks of kernel samples. Chunks that never grow past their
  // capacity, shared, so spans into them stay valid, in copies of the
  // model too.
  std::vector<std::shared_ptr<std::vector<uint8_t>>> stack_bytes;

  // Copies `frames` into stack_bytes; the span stays valid as the model.
  StackFrames keep_frames(std::span<const uint8_t> frames);

  const ProcessInfo* process(uint32_t pid) const;
  const StackFrames* stack(StackKey key) const;
  // The module holding `address` in the image of `key`, or nullptr.
  const Module* module_of(StackKey key, uint64_t address) const;
  // The kernel function holding `address`, or nullptr.
  const KernelSymbolEntry* kernel_symbol_at(uint64_t address) const;

  // Built while loading.
  std::unordered_map<uint32_t, ProcessIndex> process_by_pid;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_MODEL_H
