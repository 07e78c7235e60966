// Collapsed stacks ("folded"), one line per distinct stack: `main;f;g 123`,
// root first, for flamegraph.pl, inferno and speedscope.
#ifndef SPOOR_EXPORT_FOLDED_H
#define SPOOR_EXPORT_FOLDED_H

#include <optional>
#include <string>
#include <string_view>

#include "spoor/export/export_model.h"

namespace spoor::exporter {

enum class FoldedWeight {
  kSamples,      // CPU samples at the stack
  kAllocBytes,   // bytes allocated at the stack
  kAllocCalls,   // allocations made at the stack
  kLeakedBytes,  // bytes allocated at the stack and not freed by the end
};

// "samples", "alloc-bytes", "alloc-calls", "leaked-bytes"; nullopt for any other word.
std::optional<FoldedWeight> folded_weight_from_name(std::string_view name);

// Lines sorted by stack, stacks of weight 0 left out. A ';' inside a
// function name becomes ':' and a line break a space, so every name stays
// one frame.
std::string folded_stacks(const ExportModel& model, FoldedWeight weight);

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_FOLDED_H
