#include "spoor/analysis/custom_events.h"

#include <algorithm>
#include <tuple>

#include "spoor/reader/names.h"

namespace spoor::analysis {

// Only the program's own providers' events, all of kind `other`.
bool CustomEventAnalysis::wants(EventKind kind) const { return kind == EventKind::other; }

void CustomEventAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  if (c.known->builtin_provider) return;
  per_descriptor_[e.descriptor]++;
  matcher_.add(e);
}

std::vector<CustomEventCount> CustomEventAnalysis::counts() const {
  // Each process describes its events itself: the same provider and event
  // in two processes is one line.
  std::map<std::pair<std::string, std::string>, uint64_t> merged;
  for (const auto& [d, n] : per_descriptor_) {
    std::string name = d->name;
    if (d->opcode != 0) name += " (" + reader::opcode_name(d->opcode) + ")";
    merged[{d->provider->name, name}] += n;
  }
  std::vector<CustomEventCount> out;
  for (const auto& [key, n] : merged) out.push_back({key.first, key.second, n});
  return out;
}

std::vector<ActivityDurations> CustomEventAnalysis::activities() {
  reader::ActivityMatches m = matcher_.finish();
  unmatched_starts_ = m.unmatched_starts;
  unmatched_stops_ = m.unmatched_stops;
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> durations;
  for (const reader::ActivitySpan& s : m.spans)
    durations[{s.provider != nullptr ? s.provider->name : "", s.kind}].push_back(s.duration_ns());
  std::vector<ActivityDurations> out;
  for (auto& [key, d] : durations) {
    std::sort(d.begin(), d.end());
    ActivityDurations a;
    a.provider = key.first;
    a.kind = key.second;
    a.count = d.size();
    a.min_ns = d.front();
    a.max_ns = d.back();
    a.median_ns = d[(d.size() - 1) / 2];
    // Nearest rank: the smallest value with at least 99% of them at or below it.
    const size_t rank = (d.size() * 99 + 99) / 100;
    a.p99_ns = d[std::max<size_t>(rank, 1) - 1];
    for (int64_t x : d) a.total_ns += x;
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace spoor::analysis
