#include "spoor/analysis/cpu.h"

#include <algorithm>
#include <unordered_set>

namespace spoor::analysis {

namespace f = field;

bool CpuAnalysis::wants(EventKind kind) const {
  return kind == (source_ == SampleSource::preload ? EventKind::sample : EventKind::kernel_sample);
}

void CpuAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  uint64_t periods = 1;
  Key key{c.thread, 0};
  if (source_ == SampleSource::preload) {
    if (c.known->kind != EventKind::sample) return;
    periods = std::max<uint64_t>(1, field_u64(e, *c.known, f::kPeriods));
    key.stack = c.stack(static_cast<uint32_t>(field_u64(e, *c.known, f::kSampleStack)));
  } else {
    if (c.known->kind != EventKind::kernel_sample) return;
    key.stack = c.unwound;
  }
  auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(stacks_.size()));
  if (inserted) {
    stacks_.emplace_back();
    stacks_.back().thread = key.thread;
    stacks_.back().stack = key.stack;
  }
  SampledStack& s = stacks_[it->second];
  s.samples++;
  s.periods += periods;
  periods_ += periods;
}

CpuProfile CpuAnalysis::profile(SymbolizedStacks& symbols, ThreadIndex thread) const {
  CpuProfile out;
  std::unordered_map<std::string, size_t> by_name;
  // Per function: periods per "file:line" it was seen at, for its location.
  std::vector<std::unordered_map<std::string, uint64_t>> lines;
  auto cost_of = [&](const Frame& fr, uint64_t periods) -> FunctionCost& {
    const std::string name = fr.function_or_location();
    auto [it, inserted] = by_name.try_emplace(name, out.functions.size());
    if (inserted) {
      out.functions.emplace_back();
      out.functions.back().function = name;
      lines.emplace_back();
    }
    if (!fr.file.empty())
      lines[it->second][base_name(fr.file) + (fr.line != 0 ? ":" + std::to_string(fr.line) : "")] += periods;
    return out.functions[it->second];
  };
  std::unordered_set<size_t> seen;
  for (const SampledStack& s : stacks_) {
    if (thread != kNone && s.thread != thread) continue;
    out.periods += s.periods;
    out.samples += s.samples;
    const std::vector<Frame>& frames = symbols.frames(s.stack, StackUse::sample);
    if (frames.empty()) {
      Frame unknown;
      unknown.function = "(no stack)";
      FunctionCost& fc = cost_of(unknown, s.periods);
      fc.self += s.periods;
      fc.inclusive += s.periods;
      continue;
    }
    cost_of(frames.front(), 0).self += s.periods;
    seen.clear();
    for (const Frame& fr : frames) {
      const size_t i = static_cast<size_t>(&cost_of(fr, s.periods) - out.functions.data());
      if (seen.insert(i).second) out.functions[i].inclusive += s.periods;
    }
  }
  for (size_t i = 0; i < out.functions.size(); ++i) {
    uint64_t best = 0;
    for (const auto& [line, periods] : lines[i])
      if (periods > best || (periods == best && line < out.functions[i].location)) {
        best = periods;
        out.functions[i].location = line;
      }
  }
  std::stable_sort(out.functions.begin(), out.functions.end(), [](const FunctionCost& a, const FunctionCost& b) {
    return a.self != b.self ? a.self > b.self : a.inclusive > b.inclusive;
  });
  return out;
}

std::vector<std::pair<ThreadIndex, uint64_t>> CpuAnalysis::threads() const {
  std::unordered_map<ThreadIndex, uint64_t> per;
  std::vector<std::pair<ThreadIndex, uint64_t>> out;
  for (const SampledStack& s : stacks_) per[s.thread] += s.periods;
  out.assign(per.begin(), per.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

}  // namespace spoor::analysis
