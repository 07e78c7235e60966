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

  // Flows as the JSON format's version 2 binds them: on the slices' begin
  // events, "bind_id" with "flow_out" (the source) or "flow_in" (the
  // target), so neither viewer has to guess which slice an arrow belongs to
  // (version 1's "s"/"f" events bind to whatever slice encloses them when
  // read, which for a zero-length slice depends on event order). One flow
  // per slice: an event has one bind_id.
  std::map<uint32_t, std::pair<uint64_t, bool>> flow_of;  // slice -> (id, out)
  for (size_t f = 0; f < model.flows.size(); ++f) {
    const Flow& flow = model.flows[f];
    if (flow.from >= model.slices.size() || flow.to >= model.slices.size() || flow.from == flow.to) continue;
    if (flow_of.count(flow.from) || flow_of.count(flow.to)) continue;
    flow_of[flow.from] = {f + 1, true};
    flow_of[flow.to] = {f + 1, false};
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
        if (auto f = flow_of.find(e.slice); f != flow_of.end()) {
          event["bind_id"] = f->second.first;
          event[f->second.second ? "flow_out" : "flow_in"] = true;
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
