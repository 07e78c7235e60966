// What `spoor export` keeps of a trace's events, gathered in the analysis
// model's single pass (spoor/analysis/load.h): I/O calls as slices, custom
// start/stop activities, fork/exec and custom events as instants, the heap
// size over time, CPU samples. Stacks stay StackKeys here;
// export_model_from_trace.cpp symbolizes them. The heap per stack comes
// from analysis::HeapAnalysis, as in `spoor report`.
#ifndef SPOOR_CLI_EXPORT_EVENTS_H
#define SPOOR_CLI_EXPORT_EVENTS_H

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "spoor/analysis/load.h"
#include "spoor/export/export_model.h"
#include "spoor/reader/activity.h"

namespace spoor::cli {

struct SampleAt {
  uint32_t pid = 0;
  uint32_t tid = 0;
  int64_t time_ns = 0;
  analysis::StackKey stack = 0;
  uint32_t periods = 1;
};

class ExportEvents : public analysis::EventVisitor {
 public:
  explicit ExportEvents(const reader::Trace& trace) : trace_(trace) {}
  void on_event(const reader::Event& event, const analysis::EventContext& context) override;

  std::vector<exporter::Slice> io_slices;
  std::vector<exporter::Instant> instants;
  // Per process, at most one value per kHeapSizeStepNs. Counted per image,
  // as `spoor report` does: after an exec the counter starts again from the
  // new program's own blocks, and a fork child's from none (the blocks it
  // inherited are its parent's).
  std::vector<exporter::CounterValue> heap_size;
  std::vector<SampleAt> samples;         // the preload sampler's (Spoor.Samples)
  std::vector<SampleAt> kernel_samples;  // the kernel's (Spoor.Kernel CpuSample), unwound while loading

  // Start/stop pairs of the providers other than Spoor's own.
  reader::ActivityMatches finish_activities() { return activities_.finish(); }

  // The heap-size counter keeps one value per process per 100 µs (the last
  // of the interval): a value per allocation would be millions of points
  // that no viewer draws apart.
  static constexpr int64_t kHeapSizeStepNs = 100'000;

 private:
  struct ProcessHeap {
    std::unordered_map<uint64_t, uint64_t> live;  // block sizes by address
    int64_t bytes = 0;
    int64_t last_point_ns = INT64_MIN;
    size_t last_point = SIZE_MAX;  // index into heap_size of this image's last value
  };

  void allocated(ProcessHeap& h, uint64_t ptr, uint64_t size);
  void freed(ProcessHeap& h, uint64_t ptr);
  void heap_changed(ProcessHeap& h, uint32_t pid, int64_t time_ns);
  void io_slice(const reader::Event& e, const analysis::KnownEvent& k);

  const reader::Trace& trace_;
  reader::ActivityMatcher activities_;
  std::unordered_map<analysis::ImageIndex, ProcessHeap> heaps_;  // by image
};

}  // namespace spoor::cli

#endif  // SPOOR_CLI_EXPORT_EVENTS_H
