// CPU samples taken by the process itself, shaped as perf_event_open's
// PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER give them: a timer signal
// copies the interrupted registers (ucontext, into perf's x86-64 layout)
// and the stack from the interrupted sp upward into preallocated slots.
// With the process's module map, a capture file holds everything offline
// unwinding needs, so the unwinder is tested without perf_event_open.
#ifndef SPOOR_TESTS_UNWIND_SAMPLE_CAPTURE_H
#define SPOOR_TESTS_UNWIND_SAMPLE_CAPTURE_H

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "spoor/symbolizer/symbolizer.h"

namespace spoor::testing {

struct CapturedSample {
  uint64_t mask = 0;
  std::vector<uint64_t> regs;  // one per set bit of mask, ascending
  std::vector<uint8_t> stack;  // from the sampled sp upward
};

struct Capture {
  std::vector<symbolizer::ModuleInfo> modules;
  std::vector<CapturedSample> samples;
};

// Starts a CLOCK_MONOTONIC timer firing every `interval_us` at this
// (single-threaded) process; each signal that lands on the main thread
// keeps one sample of at most `stack_bytes` of stack, until `count`.
void start_capture(size_t count, size_t stack_bytes, unsigned interval_us);
// Samples kept so far (async-signal-safe to read).
size_t captured();
// The counter behind captured(), for a loop that must not leave its
// function to poll it.
const std::atomic<size_t>& capture_counter();
// Stops the timer and hands the samples over.
std::vector<CapturedSample> stop_capture();

// Executable mappings of this process (dl_iterate_phdr), with build IDs;
// the vDSO is left out (it has no file).
std::vector<symbolizer::ModuleInfo> own_modules();

// This program's file (/proc/self/exe); "" when unreadable.
std::string own_exe();

// Mappings of own_exe(), as /proc/self/maps lists them (what the kernel's
// mmap records of it say).
struct FileMapping {
  uint64_t start = 0, end = 0, pgoff = 0;
  bool executable = false;
};
std::vector<FileMapping> own_exe_mappings();

bool write_capture(const std::string& path, const Capture& c);
bool read_capture(const std::string& path, Capture& c);

}  // namespace spoor::testing

#endif  // SPOOR_TESTS_UNWIND_SAMPLE_CAPTURE_H
