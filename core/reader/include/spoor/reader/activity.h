// Start/stop matching: pairs an event with opcode start with the stop of the
// same kind and activity ID, giving the activity's duration.
//
// The kind of an event is its provider plus its task when the task is not 0,
// else its provider plus its name stem (the name without a trailing
// "Start"/"Stop", case-insensitive, and separators before it: "ReadStart",
// "Read_Stop" and "read/start" are all kind "Read"). Events carrying an
// activity ID match by it; events without one match the innermost open start
// of the same kind on the same thread.
#ifndef SPOOR_READER_ACTIVITY_H
#define SPOOR_READER_ACTIVITY_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spoor/reader/event.h"
#include "spoor/reader/trace.h"

namespace spoor::reader {

struct ActivitySpan {
  const Provider* provider = nullptr;
  uint16_t task = 0;
  std::string kind;  // "Read", or "Read (task 7)" when kinds are tasks
  std::optional<Guid> activity_id;  // absent when matched by thread
  uint32_t pid = 0;
  uint32_t tid = 0;  // of the start
  int64_t start_ns = 0;
  int64_t stop_ns = 0;
  const EventDescriptor* start = nullptr;
  const EventDescriptor* stop = nullptr;

  // Computed modulo 2^64, so nonsense times in a corrupt trace give a
  // nonsense duration rather than undefined behaviour.
  int64_t duration_ns() const {
    return static_cast<int64_t>(static_cast<uint64_t>(stop_ns) - static_cast<uint64_t>(start_ns));
  }
};

struct ActivityMatches {
  std::vector<ActivitySpan> spans;  // in stop order
  // Started and never stopped before the trace ended, in start order; stop
  // and stop_ns are unset. A thread alive when its process exited or
  // exec'd is one: Spoor.Thread writes no ThreadEnd for it.
  std::vector<ActivitySpan> still_open;
  uint64_t unmatched_starts = 0;  // still open at the end, or restarted
  uint64_t unmatched_stops = 0;   // no start to pair with
  // Started again (same activity ID) before the earlier start stopped.
  uint64_t restarted() const { return unmatched_starts - still_open.size(); }
};

// Feed it events in time order (EventReader's order).
class ActivityMatcher {
 public:
  ActivityMatcher();
  ActivityMatcher(ActivityMatcher&&) noexcept;
  ActivityMatcher& operator=(ActivityMatcher&&) noexcept;
  ~ActivityMatcher();

  void add(const Event& event);
  ActivityMatches finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads every event of `trace` and matches them. Record damage just ends
// the affected stream early, as in EventReader.
ActivityMatches match_activities(const Trace& trace);

// count/min/median/max of one kind of activity (0 when none of it
// stopped), and how many of it were still open at the end.
struct ActivitySummary {
  const Provider* provider = nullptr;
  std::string kind;
  uint64_t count = 0;
  uint64_t still_open = 0;
  int64_t min_ns = 0;
  int64_t median_ns = 0;  // the lower median for an even count
  int64_t max_ns = 0;
};

// One per (provider, kind), sorted by provider name then kind. A provider
// is its name and ID: the same provider in several processes is one, and
// `provider` is the first of them. `still_open` (ActivityMatches') adds
// the kinds' open counts.
std::vector<ActivitySummary> summarize(const std::vector<ActivitySpan>& spans,
                                       const std::vector<ActivitySpan>& still_open = {});

// The name stem used as a kind ("ReadStart" -> "Read"); `name` unchanged
// when it has no start/stop suffix.
std::string_view activity_stem(std::string_view name);

}  // namespace spoor::reader

#endif  // SPOOR_READER_ACTIVITY_H
