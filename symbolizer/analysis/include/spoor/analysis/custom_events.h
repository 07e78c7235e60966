// Events of the program's own providers (every provider but the recorder's:
// KnownEvent::builtin_provider):
// how many of each, and the durations of start/stop activities, paired by
// the reader's ActivityMatcher (spoor/reader/activity.h: by activity ID,
// else the innermost open start of the same kind on the thread).
#ifndef SPOOR_ANALYSIS_CUSTOM_EVENTS_H
#define SPOOR_ANALYSIS_CUSTOM_EVENTS_H

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spoor/analysis/load.h"
#include "spoor/reader/activity.h"

namespace spoor::analysis {

struct CustomEventCount {
  std::string provider;
  std::string event;  // with " (start)" / " (stop)" when its opcode says so
  uint64_t count = 0;
};

struct ActivityDurations {
  std::string provider;
  std::string kind;
  uint64_t count = 0;
  int64_t min_ns = 0;
  int64_t median_ns = 0;  // the lower median for an even count
  int64_t p99_ns = 0;     // nearest rank
  int64_t max_ns = 0;
  int64_t total_ns = 0;
};

class CustomEventAnalysis final : public EventVisitor {
 public:
  // Cost per event of a custom provider: a map increment and the matcher's
  // lookups.
  void on_event(const reader::Event& event, const EventContext& context) override;
  // Events of kind `other`: every event of the program's own providers is.
  bool wants(EventKind kind) const override;

  // By provider, then event name, over every process.
  std::vector<CustomEventCount> counts() const;
  // By provider, then kind. Call once, after the pass.
  std::vector<ActivityDurations> activities();
  uint64_t unmatched_starts() const { return unmatched_starts_; }
  uint64_t unmatched_stops() const { return unmatched_stops_; }

 private:
  std::map<const reader::EventDescriptor*, uint64_t> per_descriptor_;
  reader::ActivityMatcher matcher_;
  uint64_t unmatched_starts_ = 0;
  uint64_t unmatched_stops_ = 0;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_CUSTOM_EVENTS_H
