#include "report_sched.h"

#include <algorithm>
#include <map>

#include "event_text.h"
#include "spoor/analysis/symbolized_stacks.h"
#include "report_format.h"

namespace spoor::cli {
namespace {

using nlohmann::json;
namespace an = spoor::analysis;

uint64_t u(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<uint64_t>() : 0; }
int64_t i64(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<int64_t>() : 0; }
std::string str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

using an::kInterruptWaker;
using an::kUnknownTask;

// A task the scheduler named: the traced thread's pid when it is one.
json task_json(const an::TraceModel& m, const an::SchedAnalysis& sched, uint32_t tid, std::string comm) {
  json j = {{"tid", tid}};
  const an::ThreadIndex t = tid == kUnknownTask || tid == kInterruptWaker ? an::kNone : sched.traced(tid);
  if (t != an::kNone) {
    j["pid"] = m.threads[t].pid;
    if (comm.empty()) comm = m.threads[t].name();
  }
  if (tid == 0 && comm.empty()) comm = "swapper";
  j["comm"] = comm;
  j["traced"] = t != an::kNone;
  if (tid == kInterruptWaker) j["interrupt"] = true;
  return j;
}

json tally_json(const an::BlockTally& t) {
  return {{"requests", t.requests},     {"reads", t.reads},       {"writes", t.writes},
          {"read_bytes", t.read_bytes}, {"write_bytes", t.write_bytes}, {"other_bytes", t.other_bytes},
          {"completed", t.completed},   {"total_ns", t.total_ns}, {"max_ns", t.max_ns},
          {"mean_ns", t.completed ? t.total_ns / static_cast<int64_t>(t.completed) : 0}};
}

// "ping (1234)", "swapper (idle)", "pid 1234 tid 1235".
std::string task_text(const json& t) {
  const uint64_t tid = u(t, "tid");
  if (tid == kUnknownTask || tid == kInterruptWaker) return str(t, "comm");
  std::string s = str(t, "comm").empty() ? "?" : str(t, "comm");
  if (tid == 0) return s + " (idle)";
  s += " (" + std::to_string(tid) + (t.value("traced", false) ? ", traced" : "") + ")";
  return s;
}

std::string tasks_text(const json& list, const char* what) {
  std::string s;
  for (const json& x : list) {
    if (!s.empty()) s += ", ";
    const bool counts = std::string(what) == "count";
    s += task_text(x) + " " + (counts ? count_text(u(x, "count")) + "x" : duration_text(i64(x, "ns")));
  }
  return s.empty() ? "-" : s;
}


void add_tallies(std::vector<an::TaskTally>& into, const std::vector<an::TaskTally>& from) {
  for (const an::TaskTally& x : from) {
    auto it = std::find_if(into.begin(), into.end(), [&](const an::TaskTally& y) { return y.tid == x.tid; });
    if (it == into.end()) {
      into.push_back(x);
    } else {
      it->count += x.count;
      it->ns += x.ns;
    }
  }
}

// A latency cell: "-" when no request of the row completed in the trace.
std::string latency_text(const json& x, const char* key) {
  return u(x, "completed") == 0 ? "-" : duration_text(i64(x, key));
}

}  // namespace

std::vector<std::string> thread_images(const an::TraceModel& m, uint32_t pid, uint32_t tid,
                                       const std::vector<std::string>& names) {
  const an::ProcessInfo* p = m.process(pid);
  if (tid == pid && p != nullptr && p->images.size() > 1) {
    std::vector<std::string> images;
    for (an::ImageIndex i : p->images) {
      if (m.images[i].exe.empty()) return names;  // no ProcessStart: the comm names say it
      images.push_back(an::base_name(m.images[i].exe));
    }
    return images;
  }
  return names;
}

std::string images_text(const std::vector<std::string>& images) {
  std::string s;
  for (const std::string& n : images) s += (s.empty() ? "" : " -> exec -> ") + n;
  return s;
}

json sched_json(const an::TraceModel& m, const an::SchedAnalysis& sched, size_t top) {
  // One row per (pid, tid): the model's threads of one exec'd thread merged.
  struct Row {
    an::SchedThread sum;
    std::vector<std::string> names;
    int64_t off_ns = 0;
  };
  std::vector<Row> rows;
  std::map<std::pair<uint32_t, uint32_t>, size_t> row_of;
  for (const an::SchedThread& t : sched.threads()) {
    const an::ThreadInfo& th = m.threads[t.thread];
    auto [it, inserted] = row_of.try_emplace({th.pid, th.tid}, rows.size());
    if (inserted) {
      rows.push_back({t, {}, 0});
    } else {
      an::SchedThread& s = rows[it->second].sum;
      for (size_t r = 0; r < an::kOffCpuReasons; ++r) {
        s.off_cpu_ns[r] += t.off_cpu_ns[r];
        s.switches[r] += t.switches[r];
      }
      s.wakeups += t.wakeups;
      s.waiting_ns += t.waiting_ns;
      add_tallies(s.wakers, t.wakers);
      add_tallies(s.ran_instead, t.ran_instead);
    }
    std::vector<std::string>& names = rows[it->second].names;
    for (const std::string& n : th.names)
      if (names.empty() || names.back() != n) names.push_back(n);
  }
  for (Row& r : rows) {
    for (int64_t ns : r.sum.off_cpu_ns) r.off_ns += ns;
    std::stable_sort(r.sum.wakers.begin(), r.sum.wakers.end(),
                     [](const an::TaskTally& a, const an::TaskTally& b) { return a.count > b.count; });
    std::stable_sort(r.sum.ran_instead.begin(), r.sum.ran_instead.end(),
                     [](const an::TaskTally& a, const an::TaskTally& b) { return a.ns > b.ns; });
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.off_ns > b.off_ns; });

  json arr = json::array();
  constexpr const char* kReasons[] = {"runnable", "sleeping", "disk_sleep", "other"};
  for (const Row& row : rows) {
    const an::SchedThread& t = row.sum;
    const an::ThreadInfo& th = m.threads[t.thread];
    const std::vector<std::string> images = thread_images(m, th.pid, th.tid, row.names);
    json tj = {{"pid", th.pid}, {"tid", th.tid}, {"name", images_text(images)}, {"images", images}};
    json off = json::object(), sw = json::object();
    for (size_t r = 0; r < an::kOffCpuReasons; ++r) {
      off[kReasons[r]] = t.off_cpu_ns[r];
      sw[kReasons[r]] = t.switches[r];
    }
    tj["off_cpu_ns"] = row.off_ns;
    tj["off_cpu_by_reason_ns"] = std::move(off);
    tj["switches_by_reason"] = std::move(sw);
    tj["wakeups"] = t.wakeups;
    tj["waiting_ns"] = t.waiting_ns;
    json wakers = json::array(), ran = json::array();
    for (size_t i = 0; i < t.wakers.size() && i < top; ++i) {
      json w = task_json(m, sched, t.wakers[i].tid, t.wakers[i].comm);
      w["count"] = t.wakers[i].count;
      wakers.push_back(std::move(w));
    }
    for (size_t i = 0; i < t.ran_instead.size() && i < top; ++i) {
      json r = task_json(m, sched, t.ran_instead[i].tid, t.ran_instead[i].comm);
      r["ns"] = t.ran_instead[i].ns;
      ran.push_back(std::move(r));
    }
    tj["wakers"] = std::move(wakers);
    tj["ran_instead"] = std::move(ran);
    arr.push_back(std::move(tj));
  }
  return {{"threads", std::move(arr)}, {"out_of_order_switches", sched.out_of_order()}};
}

json block_json(const an::TraceModel& m, const an::BlockAnalysis& block, const an::SchedAnalysis& sched, size_t top) {
  json devices = json::array(), issuers = json::array();
  for (const an::BlockDevice& d : block.devices()) {
    json j = tally_json(d.tally);
    j["device"] = block.label(d.dev);  // "sda (8:0)", or "8:0" when the trace has no name for it
    j["major_minor"] = an::device_name(d.dev);
    j["name"] = std::string(block.name(d.dev));
    devices.push_back(std::move(j));
  }
  size_t n = 0;
  for (const an::BlockIssuer& i : block.issuers()) {
    if (n++ == top) break;
    json j = task_json(m, sched, i.tid, std::string(sched.comm(i.tid)));
    j.update(tally_json(i.tally));
    issuers.push_back(std::move(j));
  }
  return {{"devices", std::move(devices)}, {"issuers", std::move(issuers)}};
}

void print_sched(const json& s, std::string& out) {
  out += "\n  scheduler (sched_switch, sched_waking): the traced threads off the CPU, by why\n";
  Table t({{"PID", Table::right}, {"TID", Table::right}, {"RUNNABLE", Table::right}, {"SLEEPING", Table::right},
           {"DISK SLEEP", Table::right}, {"OTHER", Table::right}, {"WAKEUPS", Table::right},
           {"WAIT TO RUN", Table::right}, {"NAME", Table::left}});
  for (const json& th : s["threads"]) {
    const json& off = th["off_cpu_by_reason_ns"];
    t.row({std::to_string(u(th, "pid")), std::to_string(u(th, "tid")), ms_text(i64(off, "runnable")),
           ms_text(i64(off, "sleeping")), ms_text(i64(off, "disk_sleep")), ms_text(i64(off, "other")),
           count_text(u(th, "wakeups")), ms_text(i64(th, "waiting_ns")), str(th, "name")});
    t.note("woken by: " + tasks_text(th["wakers"], "count"));
    t.note("ran instead while it waited to run: " + tasks_text(th["ran_instead"], "ns"));
  }
  if (t.empty()) {
    out += "    (no scheduler records of the traced threads)\n";
    return;
  }
  t.print(out, "    ");
  out += "    (runnable: preempted or woken, waiting for a CPU; disk sleep: uninterruptible, mostly I/O;\n"
         "     what ran instead: on the CPU the thread then ran on)\n";
  if (u(s, "out_of_order_switches") > 0)
    out += "    " + count_text(u(s, "out_of_order_switches")) +
           " switch-ins were stamped before their thread's switch-out (two CPUs' records out of order): "
           "each counts 0 ns off the CPU\n";
}

void print_block(const json& b, std::string& out) {
  out += "\n  block I/O requests (block_rq_issue -> block_rq_complete), per device\n";
  Table d({{"REQUESTS", Table::right}, {"READ", Table::right}, {"WRITTEN", Table::right}, {"OTHER", Table::right},
           {"MEAN", Table::right}, {"MAX", Table::right}, {"DEVICE", Table::left}});
  for (const json& x : b["devices"])
    d.row({count_text(u(x, "requests")), bytes_text(u(x, "read_bytes")), bytes_text(u(x, "write_bytes")),
           bytes_text(u(x, "other_bytes")), latency_text(x, "mean_ns"), latency_text(x, "max_ns"),
           str(x, "device")});
  if (d.empty()) {
    out += "    (none)\n";
    return;
  }
  d.print(out, "    ");
  out += "\n  block I/O requests per issuing task (the task running when the request went to the driver)\n";
  Table i({{"REQUESTS", Table::right}, {"READ", Table::right}, {"WRITTEN", Table::right}, {"OTHER", Table::right},
           {"MEAN", Table::right}, {"MAX", Table::right}, {"TASK", Table::left}});
  for (const json& x : b["issuers"])
    i.row({count_text(u(x, "requests")), bytes_text(u(x, "read_bytes")), bytes_text(u(x, "write_bytes")),
           bytes_text(u(x, "other_bytes")), latency_text(x, "mean_ns"), latency_text(x, "max_ns"),
           task_text(x)});
  i.print(out, "    ");
  out += "    (other: neither read nor write, such as discards and flushes; mean and max: issue to completion,\n"
         "     \"-\" when none completed while recording)\n";
}

}  // namespace spoor::cli
