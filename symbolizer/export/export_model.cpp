#include "spoor/export/export_model.h"

#include <cinttypes>
#include <cstdio>

namespace spoor::exporter {

std::string frame_label(const ExportModel& model, const Location& location, const Frame* frame) {
  if (frame != nullptr && !frame->function.empty()) return frame->function;
  char offset[32];
  if (location.module < model.modules.size()) {
    // Unnamed: by its function's start when known, so that a flame graph
    // or profile keeps one box per function, not one per address.
    const Module& m = model.modules[location.module];
    std::snprintf(offset, sizeof offset, "+0x%" PRIx64,
                  location.has_function_start ? location.function_start : location.address - m.bias);
    const size_t slash = m.path.rfind('/');
    return (location.has_function_start ? "function at " : "") +
           (slash == std::string::npos ? m.path : m.path.substr(slash + 1)) + offset;
  }
  std::snprintf(offset, sizeof offset, "0x%" PRIx64, location.address);
  return offset;
}

std::vector<std::string> stack_labels_root_first(const ExportModel& model, const Stack& stack) {
  std::vector<std::string> labels;
  for (auto it = stack.locations.rbegin(); it != stack.locations.rend(); ++it) {
    if (*it >= model.locations.size()) continue;  // a dangling index names nothing
    const Location& l = model.locations[*it];
    if (l.frames.empty()) labels.push_back(frame_label(model, l, nullptr));
    for (auto f = l.frames.rbegin(); f != l.frames.rend(); ++f) labels.push_back(frame_label(model, l, &*f));
  }
  return labels;
}

}  // namespace spoor::exporter
