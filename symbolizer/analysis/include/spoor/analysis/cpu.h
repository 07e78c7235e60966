// CPU samples (Spoor.Samples Sample) aggregated by thread and stack during
// the pass, then by function once the stacks are symbolized: self (the
// sampled frame's function) and inclusive (every function on the stack,
// once per sample however deep the recursion). Weights are sampling
// periods (a sample stands for 1 plus its timer's overrun).
#ifndef SPOOR_ANALYSIS_CPU_H
#define SPOOR_ANALYSIS_CPU_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "spoor/analysis/load.h"
#include "spoor/analysis/symbolized_stacks.h"

namespace spoor::analysis {

// spoor record's sampling rate when --sample-hz is not given: what a trace
// without a SamplerStart event was sampled at (TraceModel::sample_hz 0).
inline constexpr uint32_t kDefaultSampleHz = 1000;

struct SampledStack {
  ThreadIndex thread = kNone;
  StackKey stack = 0;
  uint64_t samples = 0;
  uint64_t periods = 0;
};

struct FunctionCost {
  std::string function;  // Frame::function_or_location()
  std::string location;  // "file.c:12": the line with the most periods in it, "" when unknown
  uint64_t self = 0;       // periods
  uint64_t inclusive = 0;  // periods
};

struct CpuProfile {
  uint64_t periods = 0;
  uint64_t samples = 0;
  std::vector<FunctionCost> functions;  // by self, then inclusive, descending
};

// Which samples a CpuAnalysis counts: the preload's sampler (Spoor.Samples
// Sample, `periods` each) or the kernel's (Spoor.Kernel CpuSample, one
// period each, its stack unwound by the loader: EventContext::unwound).
enum class SampleSource : uint8_t { preload, kernel };

class CpuAnalysis final : public EventVisitor {
 public:
  explicit CpuAnalysis(SampleSource source = SampleSource::preload) : source_(source) {}
  SampleSource source() const { return source_; }

  // Cost per Sample: one hash lookup of (thread, stack).
  void on_event(const reader::Event& event, const EventContext& context) override;
  // The samples of its source only.
  bool wants(EventKind kind) const override;

  // Every (thread, stack) sampled, in order of first sample.
  const std::vector<SampledStack>& stacks() const { return stacks_; }
  uint64_t periods() const { return periods_; }

  // Functions of the samples of `thread` (kNone: of every thread).
  CpuProfile profile(SymbolizedStacks& symbols, ThreadIndex thread = kNone) const;
  // Threads with samples, most periods first, with their periods.
  std::vector<std::pair<ThreadIndex, uint64_t>> threads() const;

 private:
  std::vector<SampledStack> stacks_;
  struct Key {
    ThreadIndex thread;
    StackKey stack;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.stack * 31 + k.thread); }
  };
  std::unordered_map<Key, uint32_t, KeyHash> index_;  // -> stacks_
  uint64_t periods_ = 0;
  SampleSource source_;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_CPU_H
