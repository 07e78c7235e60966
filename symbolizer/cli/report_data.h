// What `spoor report` says about a trace, as one JSON document: the
// `--format json` output as it is, and what the text form is printed from,
// so both always say the same. Sizes are bytes, times nanoseconds (`*_ns`;
// points in time relative to the first event), addresses "0x..." strings.
#ifndef SPOOR_CLI_REPORT_DATA_H
#define SPOOR_CLI_REPORT_DATA_H

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "spoor/analysis/cpu.h"
#include "spoor/analysis/custom_events.h"
#include "spoor/analysis/heap.h"
#include "spoor/analysis/heap_functions.h"
#include "spoor/analysis/io.h"
#include "spoor/analysis/kernel.h"
#include "spoor/analysis/kernel_block.h"
#include "spoor/analysis/kernel_sched.h"
#include "spoor/analysis/model.h"
#include "spoor/analysis/symbolized_stacks.h"
#include "spoor/reader/trace.h"

namespace spoor::cli {

struct ReportSections {
  // The report is for print_report_text: a stack keeps only the frames the
  // text can show (its own frame and a few callers, with "own_frame" and
  // "frames_total"), not every frame as the JSON output does. A report of
  // many processes held ~90 MB of frames it never printed.
  bool for_text = false;
  bool heap = false;
  bool io = false;
  bool cpu = false;
  bool threads = false;
  bool events = false;
  bool kernel = false;
};

struct ReportInputs {
  std::string path;
  const reader::Trace* trace = nullptr;
  const analysis::TraceModel* model = nullptr;
  const analysis::HeapAnalysis* heap = nullptr;
  const analysis::IoAnalysis* io = nullptr;
  const analysis::CpuAnalysis* cpu = nullptr;
  analysis::CustomEventAnalysis* custom = nullptr;
  const analysis::KernelAnalysis* kernel = nullptr;
  const analysis::CpuAnalysis* kernel_cpu = nullptr;  // CpuAnalysis(SampleSource::kernel)
  const analysis::SchedAnalysis* sched = nullptr;
  const analysis::BlockAnalysis* block = nullptr;
  analysis::SymbolizedStacks* symbols = nullptr;
  std::vector<uint32_t> only_pids;  // --pid: the analyses saw only these processes' events
  uint32_t live_recorder = 0;       // the pid of the spoor record still writing the trace (live_recorder.h)
};

// The sections that have something to say (the default choice).
ReportSections sections_with_data(const ReportInputs& in);

// `top`: rows per ranking (sites, files, functions).
nlohmann::json build_report(const ReportInputs& in, const ReportSections& sections, size_t top);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_REPORT_DATA_H
