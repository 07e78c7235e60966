#include "spoor/export/chrome_json.h"

#include <map>
#include <nlohmann/json.hpp>

#include "timeline.h"

namespace spoor::exporter {
namespace {

using nlohmann::json;

// Above PID_MAX_LIMIT (2^22): a lane's pseudo-thread never meets a real tid.
constexpr uint32_t kFirstLaneTid = 0x40000000;

double micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

json metadata(const char* what, uint32_t pid, uint32_t tid, const std::string& name) {
  return json{{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

std::string chrome_trace_json(const ExportModel& model) {
  json events = json::array();
  for (const Process& p : timeline_processes(model)) {
    std::string name = p.name.empty() ? "pid " + std::to_string(p.pid) : p.name;
    events.push_back(metadata("process_name", p.pid, p.pid, name));
  }
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names;
  for (const Thread& t : timeline_threads(model)) {
    std::string name = t.name.empty() ? "tid " + std::to_string(t.tid) : t.name;
    thread_names[{t.pid, t.tid}] = name;
    events.push_back(metadata("thread_name", t.pid, t.tid, name));
  }

  uint32_t next_lane_tid = kFirstLaneTid;
  for (const SliceLane& lane : nest_slices(model.slices)) {
    uint32_t tid = lane.tid;
    if (lane.lane > 0) {
      tid = next_lane_tid++;
      events.push_back(metadata("thread_name", lane.pid, tid,
                                thread_names[{lane.pid, lane.tid}] + " (overlapping " + std::to_string(lane.lane) + ")"));
    }
    for (const SliceEdge& e : lane.edges) {
      const Slice& s = model.slices[e.slice];
      json event{{"ph", e.begin ? "B" : "E"},
                 {"pid", s.pid},
                 {"tid", tid},
                 {"ts", micros(e.begin ? s.begin_ns : std::max(s.end_ns, s.begin_ns))},
                 {"name", s.name}};
      if (e.begin) {
        if (!s.category.empty()) event["cat"] = s.category;
        if (!s.args.empty()) {
          json args = json::object();
          for (const auto& [k, v] : s.args) args[k] = v;
          event["args"] = std::move(args);
        }
      }
      events.push_back(std::move(event));
    }
  }

  for (const Instant& i : model.instants) {
    json event{{"ph", "i"}, {"s", "t"}, {"pid", i.pid}, {"tid", i.tid}, {"ts", micros(i.time_ns)}, {"name", i.name}};
    if (!i.category.empty()) event["cat"] = i.category;
    events.push_back(std::move(event));
  }

  for (const Counter& c : model.counters)
    for (const CounterValue& v : c.values) {
      const std::string series = c.unit.empty() ? "value" : c.unit;
      events.push_back(json{{"ph", "C"},
                            {"pid", v.pid},
                            {"tid", v.pid},
                            {"ts", micros(v.time_ns)},
                            {"name", c.name},
                            {"args", {{series, v.value}}}});
    }

  json doc{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  // Names come from the traced program and need not be UTF-8: replace what is not.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace spoor::exporter
