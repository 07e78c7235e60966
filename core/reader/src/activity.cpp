// Start/stop matching. Kinds are interned to small ids so the open-activity
// maps key on (kind id, activity id) or (kind id, pid, tid).
#include "spoor/reader/activity.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "spoor/format.h"
#include "spoor/reader/event_reader.h"

namespace spoor::reader {
namespace {

namespace fmt = spoor::format;

bool ends_with_nocase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = s[s.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

struct Open {
  int64_t start_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  const EventDescriptor* start = nullptr;
};

struct Kind {
  const Provider* provider = nullptr;
  uint16_t task = 0;
  std::string label;
};

}  // namespace

std::string_view activity_stem(std::string_view name) {
  std::string_view stem = name;
  if (ends_with_nocase(stem, "start")) stem.remove_suffix(5);
  else if (ends_with_nocase(stem, "stop")) stem.remove_suffix(4);
  else return name;
  while (!stem.empty() && std::string_view("_-./: ").find(stem.back()) != std::string_view::npos)
    stem.remove_suffix(1);
  return stem.empty() ? name : stem;
}

struct ActivityMatcher::State {
  // (provider, task, stem): stem is empty when task is not 0.
  std::map<std::tuple<const Provider*, uint16_t, std::string>, size_t> kind_ids;
  std::vector<Kind> kinds;
  std::map<std::pair<size_t, Guid>, Open> by_activity;
  std::map<std::tuple<size_t, uint32_t, uint32_t>, std::vector<Open>> by_thread;
  ActivityMatches result;

  size_t kind_of(const Event& e) {
    const EventDescriptor& d = *e.descriptor;
    const std::string_view stem = activity_stem(d.name);
    auto key = std::make_tuple(d.provider, d.task, d.task != 0 ? std::string() : std::string(stem));
    auto [it, inserted] = kind_ids.emplace(key, kinds.size());
    if (inserted) {
      Kind k{d.provider, d.task, std::string(stem)};
      // A task kind is named after the first event seen of it (usually
      // the start), which is what a reader recognizes; the task number
      // keeps kinds with equal names apart.
      if (d.task != 0) k.label = std::string(stem) + " (task " + std::to_string(d.task) + ")";
      kinds.push_back(std::move(k));
    }
    return it->second;
  }

  ActivitySpan span_of(size_t kind, const Open& open, const std::optional<Guid>& activity) const {
    const Kind& k = kinds[kind];
    ActivitySpan span;
    span.provider = k.provider;
    span.task = k.task;
    span.kind = k.label;
    span.activity_id = activity;
    span.pid = open.pid;
    span.tid = open.tid;
    span.start_ns = open.start_ns;
    span.start = open.start;
    return span;
  }

  void close(size_t kind, const Open& open, const Event& stop,
             const std::optional<Guid>& activity) {
    ActivitySpan span = span_of(kind, open, activity);
    span.stop_ns = stop.time_ns;
    span.stop = stop.descriptor;
    result.spans.push_back(std::move(span));
  }
};

ActivityMatcher::ActivityMatcher() : state_(std::make_unique<State>()) {}
ActivityMatcher::ActivityMatcher(ActivityMatcher&&) noexcept = default;
ActivityMatcher& ActivityMatcher::operator=(ActivityMatcher&&) noexcept = default;
ActivityMatcher::~ActivityMatcher() = default;

void ActivityMatcher::add(const Event& e) {
  if (e.descriptor == nullptr) return;
  const uint8_t op = e.descriptor->opcode;
  if (op != fmt::kOpStart && op != fmt::kOpStop) return;
  State& s = *state_;
  const size_t kind = s.kind_of(e);
  // A zero activity ID is ETW's "none".
  const bool has_activity = e.activity_id.has_value() && !e.activity_id->is_zero();
  const Open open{e.time_ns, e.pid, e.tid, e.descriptor};
  if (has_activity) {
    const auto key = std::make_pair(kind, *e.activity_id);
    if (op == fmt::kOpStart) {
      auto [it, inserted] = s.by_activity.insert_or_assign(key, open);
      if (!inserted) ++s.result.unmatched_starts;  // restarted before it stopped
      return;
    }
    auto it = s.by_activity.find(key);
    if (it == s.by_activity.end()) {
      ++s.result.unmatched_stops;
      return;
    }
    s.close(kind, it->second, e, e.activity_id);
    s.by_activity.erase(it);
    return;
  }
  auto& stack = s.by_thread[std::make_tuple(kind, e.pid, e.tid)];
  if (op == fmt::kOpStart) {
    stack.push_back(open);
    return;
  }
  if (stack.empty()) {
    ++s.result.unmatched_stops;
    return;
  }
  s.close(kind, stack.back(), e, std::nullopt);
  stack.pop_back();
}

ActivityMatches ActivityMatcher::finish() {
  State& s = *state_;
  std::vector<ActivitySpan>& open = s.result.still_open;
  for (const auto& [key, start] : s.by_activity) open.push_back(s.span_of(key.first, start, key.second));
  for (const auto& [key, stack] : s.by_thread)
    for (const Open& start : stack) open.push_back(s.span_of(std::get<0>(key), start, std::nullopt));
  std::stable_sort(open.begin(), open.end(),
                   [](const ActivitySpan& a, const ActivitySpan& b) { return a.start_ns < b.start_ns; });
  s.result.unmatched_starts += open.size();
  s.by_activity.clear();
  s.by_thread.clear();
  return std::move(s.result);
}

ActivityMatches match_activities(const Trace& trace) {
  EventReader reader(trace);
  ActivityMatcher matcher;
  Event e;
  while (reader.next(e)) matcher.add(e);
  return matcher.finish();
}

std::vector<ActivitySummary> summarize(const std::vector<ActivitySpan>& spans,
                                       const std::vector<ActivitySpan>& still_open) {
  // Keyed by the provider's name and ID, not its address: each process
  // has a Provider of its own, and the spans of one provider in many
  // processes (Spoor.Thread's thread lifetimes, a library's requests) are
  // one kind. The order then depends on nothing but the names.
  struct Group {
    const Provider* provider = nullptr;  // the first one met
    std::vector<int64_t> durations;
    uint64_t still_open = 0;
  };
  std::map<std::tuple<std::string, Guid, std::string>, Group> groups;
  auto group_of = [&](const ActivitySpan& s) -> Group& {
    const std::string provider_name = s.provider != nullptr ? s.provider->name : std::string();
    const Guid id = s.provider != nullptr ? s.provider->guid : Guid{};
    Group& g = groups[std::make_tuple(provider_name, id, s.kind)];
    if (g.provider == nullptr) g.provider = s.provider;
    return g;
  };
  for (const ActivitySpan& s : spans) group_of(s).durations.push_back(s.duration_ns());
  for (const ActivitySpan& s : still_open) ++group_of(s).still_open;
  std::vector<ActivitySummary> out;
  out.reserve(groups.size());
  for (auto& [key, group] : groups) {
    std::vector<int64_t>& durations = group.durations;
    std::sort(durations.begin(), durations.end());
    ActivitySummary a;
    a.provider = group.provider;
    a.kind = std::get<2>(key);
    a.count = durations.size();
    a.still_open = group.still_open;
    if (!durations.empty()) {
      a.min_ns = durations.front();
      a.median_ns = durations[(durations.size() - 1) / 2];
      a.max_ns = durations.back();
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace spoor::reader
