#include "spoor/export/export_model.h"

#include <cinttypes>
#include <cstdio>

namespace spoor::exporter {

std::string frame_label(const ExportModel& model, const Location& location, const Frame* frame) {
  if (frame != nullptr && !frame->function.empty()) return frame->function;
  char offset[32];
  if (location.module < model.modules.size()) {
    const Module& m = model.modules[location.module];
    std::snprintf(offset, sizeof offset, "+0x%" PRIx64, location.address - m.bias);
    const size_t slash = m.path.rfind('/');
    return (slash == std::string::npos ? m.path : m.path.substr(slash + 1)) + offset;
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
