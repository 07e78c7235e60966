#include "spoor/analysis/model.h"

#include <algorithm>
#include <iterator>

namespace spoor::analysis {

const Module* Image::module_at(uint64_t address, int64_t time_ns) const {
  // Latest first: a library unloaded and another loaded at its place.
  for (auto it = modules.rbegin(); it != modules.rend(); ++it) {
    if (!it->contains(address)) continue;
    if (time_ns == kNeverNs || (it->load_ns <= time_ns && time_ns <= it->unload_ns)) return &*it;
  }
  if (time_ns != kNeverNs) return module_at(address, kNeverNs);
  return nullptr;
}

const std::string& ThreadInfo::name() const {
  static const std::string kEmpty;
  return names.empty() ? kEmpty : names.back();
}

StackFrames TraceModel::keep_frames(std::span<const uint8_t> frames) {
  // 1 MiB chunks: a stack of 64 frames is 512 bytes.
  constexpr size_t kChunk = size_t{1} << 20;
  if (frames.empty()) return StackFrames{};
  if (stack_bytes.empty() || stack_bytes.back()->capacity() - stack_bytes.back()->size() < frames.size()) {
    auto chunk = std::make_shared<std::vector<uint8_t>>();
    chunk->reserve(frames.size() > kChunk ? frames.size() : kChunk);
    stack_bytes.push_back(std::move(chunk));
  }
  std::vector<uint8_t>& chunk = *stack_bytes.back();
  const size_t at = chunk.size();
  chunk.insert(chunk.end(), frames.begin(), frames.end());  // within capacity: no move
  return StackFrames{std::span<const uint8_t>(chunk.data() + at, frames.size())};
}

const KernelSymbolEntry* TraceModel::kernel_symbol_at(uint64_t address) const {
  auto it = std::upper_bound(kernel_symbols.begin(), kernel_symbols.end(), address,
                             [](uint64_t a, const KernelSymbolEntry& s) { return a < s.address; });
  return it == kernel_symbols.begin() ? nullptr : &*std::prev(it);
}

const ProcessInfo* TraceModel::process(uint32_t pid) const {
  auto it = process_by_pid.find(pid);
  return it == process_by_pid.end() ? nullptr : &processes[it->second];
}

const StackFrames* TraceModel::stack(StackKey key) const {
  auto it = stacks.find(key);
  return it == stacks.end() ? nullptr : &it->second;
}

const Module* TraceModel::module_of(StackKey key, uint64_t address) const {
  const ImageIndex image = stack_image(key);
  return image < images.size() ? images[image].module_at(address) : nullptr;
}

}  // namespace spoor::analysis
