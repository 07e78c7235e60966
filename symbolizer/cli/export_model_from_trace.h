// A trace as the export writers' structs (spoor/export/export_model.h):
// the analysis model's processes, threads and modules, ExportEvents' slices,
// instants, heap and samples, and every stack they name symbolized.
#ifndef SPOOR_CLI_EXPORT_MODEL_FROM_TRACE_H
#define SPOOR_CLI_EXPORT_MODEL_FROM_TRACE_H

#include <optional>
#include <string>
#include <vector>

#include "spoor/analysis/model.h"
#include "spoor/export/export_model.h"
#include "spoor/reader/trace.h"
#include "spoor/symbolizer/symbolizer.h"

namespace spoor::cli {

struct ExportInput {
  exporter::ExportModel model;
  analysis::TraceHealth health;                  // damage the load met
  uint64_t events = 0;
  std::vector<symbolizer::ModuleProblem> problems;  // modules without symbols
};

// `sample_hz`: the rate spoor record sampled at, for CPU time per
// sampling period; nullopt: the rate the trace records (SamplerStart), else
// spoor record's default. `only_pids`, when not empty: the events,
// processes and threads of these processes only (LoadOptions::only_pids).
ExportInput export_model_from_trace(const reader::Trace& trace, symbolizer::Options options,
                                    std::optional<int64_t> sample_hz = std::nullopt,
                                    const std::vector<uint32_t>& only_pids = {});

}  // namespace spoor::cli

#endif  // SPOOR_CLI_EXPORT_MODEL_FROM_TRACE_H
