#include "timeline.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace spoor::exporter {

std::vector<Process> timeline_processes(const ExportModel& model) {
  std::map<uint32_t, Process> by_pid;
  for (const Process& p : model.processes) by_pid[p.pid] = p;
  auto mention = [&](uint32_t pid) { by_pid.try_emplace(pid, Process{.pid = pid, .name = {}, .cmdline = {}, .exe = {}}); };
  for (const Thread& t : model.threads) mention(t.pid);
  for (const Slice& s : model.slices) mention(s.pid);
  for (const Instant& i : model.instants) mention(i.pid);
  for (const CpuSample& s : model.cpu_samples) mention(s.pid);
  for (const Counter& c : model.counters)
    for (const CounterValue& v : c.values) mention(v.pid);
  std::vector<Process> out;
  for (auto& [pid, p] : by_pid) out.push_back(std::move(p));
  return out;
}

std::vector<Thread> timeline_threads(const ExportModel& model) {
  std::map<std::pair<uint32_t, uint32_t>, Thread> by_id;
  for (const Thread& t : model.threads) by_id[{t.pid, t.tid}] = t;
  auto mention = [&](uint32_t pid, uint32_t tid) {
    by_id.try_emplace({pid, tid}, Thread{.pid = pid, .tid = tid, .name = {}});
  };
  for (const Slice& s : model.slices) mention(s.pid, s.tid);
  for (const Instant& i : model.instants) mention(i.pid, i.tid);
  for (const CpuSample& s : model.cpu_samples) mention(s.pid, s.tid);
  std::vector<Thread> out;
  for (auto& [id, t] : by_id) out.push_back(std::move(t));
  return out;
}

std::vector<SliceLane> nest_slices(const std::vector<Slice>& slices) {
  std::vector<uint32_t> order(slices.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Slice& x = slices[a];
    const Slice& y = slices[b];
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.tid != y.tid) return x.tid < y.tid;
    if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
    if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;  // the outer one first
    return a < b;
  });

  std::vector<SliceLane> out;
  struct OpenLane {
    SliceLane lane;
    std::vector<uint32_t> open;  // slices begun and not yet ended, innermost last
  };
  std::vector<OpenLane> lanes;  // of the current thread
  auto flush_thread = [&] {
    for (OpenLane& l : lanes) {
      while (!l.open.empty()) {
        l.lane.edges.push_back({l.open.back(), false});
        l.open.pop_back();
      }
      out.push_back(std::move(l.lane));
    }
    lanes.clear();
  };

  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t index = order[i];
    const Slice& s = slices[index];
    if (i > 0 && (slices[order[i - 1]].pid != s.pid || slices[order[i - 1]].tid != s.tid)) flush_thread();
    const int64_t end = std::max(s.end_ns, s.begin_ns);
    size_t k = 0;
    for (;; ++k) {
      if (k == lanes.size())
        lanes.push_back({.lane = {.pid = s.pid, .tid = s.tid, .lane = static_cast<uint32_t>(k), .edges = {}},
                         .open = {}});
      OpenLane& l = lanes[k];
      // What ended by the time this slice begins closes first: the lane's
      // edges stay in time order because slices arrive by begin time.
      while (!l.open.empty() && std::max(slices[l.open.back()].end_ns, slices[l.open.back()].begin_ns) <= s.begin_ns) {
        l.lane.edges.push_back({l.open.back(), false});
        l.open.pop_back();
      }
      if (l.open.empty() || std::max(slices[l.open.back()].end_ns, slices[l.open.back()].begin_ns) >= end) break;
    }
    lanes[k].open.push_back(index);
    lanes[k].lane.edges.push_back({index, true});
  }
  flush_thread();
  return out;
}

}  // namespace spoor::exporter
