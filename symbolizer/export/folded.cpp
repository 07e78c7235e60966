#include "spoor/export/folded.h"

#include <map>

namespace spoor::exporter {

std::optional<FoldedWeight> folded_weight_from_name(std::string_view name) {
  if (name == "samples") return FoldedWeight::kSamples;
  if (name == "alloc-bytes") return FoldedWeight::kAllocBytes;
  if (name == "alloc-calls") return FoldedWeight::kAllocCalls;
  if (name == "leaked-bytes") return FoldedWeight::kLeakedBytes;
  return std::nullopt;
}

namespace {

std::string folded_name(std::string name) {
  for (char& c : name) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return name;
}

}  // namespace

std::string folded_stacks(const ExportModel& model, FoldedWeight weight) {
  std::map<uint32_t, uint64_t> per_stack;
  if (weight == FoldedWeight::kSamples) {
    for (const CpuSample& s : model.cpu_samples) ++per_stack[s.stack];
  } else {
    for (const AllocationSite& a : model.allocations) {
      const uint64_t w = weight == FoldedWeight::kAllocBytes   ? a.alloc_bytes
                         : weight == FoldedWeight::kAllocCalls ? a.alloc_calls
                                                               : a.live_bytes;
      per_stack[a.stack] += w;
    }
  }
  // Two stacks can fold to the same line (same functions, other addresses).
  std::map<std::string, uint64_t> lines;
  for (const auto& [stack, w] : per_stack) {
    if (w == 0 || stack >= model.stacks.size()) continue;
    std::string line;
    for (const std::string& label : stack_labels_root_first(model, model.stacks[stack]))
      line += (line.empty() ? "" : ";") + folded_name(label);
    if (line.empty()) line = "[no stack]";
    lines[line] += w;
  }
  std::string out;
  for (const auto& [line, w] : lines) out += line + " " + std::to_string(w) + "\n";
  return out;
}

}  // namespace spoor::exporter
