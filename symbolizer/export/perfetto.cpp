// Field numbers come from the upstream protos in google/perfetto,
// protos/perfetto/trace/..., cited beside each message's writer.
#include "spoor/export/perfetto.h"

#include <map>
#include <unordered_map>

#include "proto_writer.h"
#include "timeline.h"

namespace spoor::exporter {
namespace {

constexpr uint64_t kSequenceId = 1;

// trace_packet.proto TracePacket.SequenceFlags.
constexpr uint64_t kSeqIncrementalStateCleared = 1;
constexpr uint64_t kSeqNeedsIncrementalState = 2;

// track_event.proto TrackEvent.Type.
constexpr uint64_t kTypeSliceBegin = 1;
constexpr uint64_t kTypeSliceEnd = 2;
constexpr uint64_t kTypeInstant = 3;
constexpr uint64_t kTypeCounter = 4;

// counter_descriptor.proto CounterDescriptor.Unit.
constexpr uint64_t kUnitCount = 2;
constexpr uint64_t kUnitSizeBytes = 3;

uint64_t process_uuid(uint32_t pid) { return (uint64_t{1} << 56) | pid; }
uint64_t thread_uuid(uint32_t pid, uint32_t tid) { return (uint64_t{2} << 56) | (uint64_t{pid} << 24) | tid; }
uint64_t lane_uuid(size_t thread_index, uint32_t lane) {
  return (uint64_t{3} << 56) | (uint64_t{thread_index} << 16) | lane;
}
uint64_t counter_uuid(size_t counter, uint32_t pid) { return (uint64_t{4} << 56) | (uint64_t{counter} << 32) | pid; }

// The file: `message Trace { repeated TracePacket packet = 1; }`
// (protos/perfetto/trace/trace.proto).
class TraceFile {
 public:
  // trace_packet.proto: timestamp = 8, trusted_packet_sequence_id = 10,
  // sequence_flags = 13. `payload` is already wrapped in its oneof field.
  void add(const ProtoMessage& payload, int64_t time_ns, bool timed, uint64_t flags) {
    ProtoMessage packet;
    if (timed) packet.add_varint(8, static_cast<uint64_t>(time_ns));
    packet.add_varint(10, kSequenceId);
    if (flags != 0) packet.add_varint(13, flags);
    // Payload fields after the header: field order does not matter to parsers.
    std::string bytes = packet.bytes() + payload.bytes();
    file_.append(wrap(bytes));
  }
  const std::string& bytes() const { return file_; }

 private:
  static std::string wrap(const std::string& packet) {
    ProtoMessage m;
    m.add_bytes(1, packet);
    return m.bytes();
  }
  std::string file_;
};

// track_descriptor.proto TrackDescriptor: uuid = 1, name = 2, process = 3,
// thread = 4, parent_uuid = 5, counter = 8. Wrapped as TracePacket.track_descriptor = 60.
ProtoMessage track_packet(const ProtoMessage& descriptor) {
  ProtoMessage m;
  m.add_message(60, descriptor);
  return m;
}

// process_descriptor.proto ProcessDescriptor: pid = 1, cmdline = 2, process_name = 6.
ProtoMessage process_track(const Process& p) {
  ProtoMessage process;
  process.add_int(1, p.pid);
  for (const std::string& arg : p.cmdline) process.add_bytes(2, arg);
  if (!p.name.empty()) process.add_bytes(6, p.name);
  ProtoMessage track;
  track.add_varint(1, process_uuid(p.pid));
  track.add_message(3, process);
  return track;
}

// thread_descriptor.proto ThreadDescriptor: pid = 1, tid = 2, thread_name = 5.
ProtoMessage thread_track(const Thread& t) {
  ProtoMessage thread;
  thread.add_int(1, t.pid);
  thread.add_int(2, t.tid);
  if (!t.name.empty()) thread.add_bytes(5, t.name);
  ProtoMessage track;
  track.add_varint(1, thread_uuid(t.pid, t.tid));
  track.add_varint(5, process_uuid(t.pid));
  track.add_message(4, thread);
  return track;
}

// counter_descriptor.proto CounterDescriptor: unit = 3.
ProtoMessage counter_track(uint64_t uuid, uint32_t pid, const Counter& c) {
  ProtoMessage counter;
  if (c.unit == "bytes") counter.add_varint(3, kUnitSizeBytes);
  else if (c.unit == "count") counter.add_varint(3, kUnitCount);
  ProtoMessage track;
  track.add_varint(1, uuid);
  track.add_bytes(2, c.name);
  track.add_varint(5, process_uuid(pid));
  track.add_message(8, counter);
  return track;
}

// debug_annotation.proto DebugAnnotation: string_value = 6, name = 10.
ProtoMessage annotation(const std::string& name, const std::string& value) {
  ProtoMessage m;
  m.add_bytes(10, name);
  m.add_bytes(6, value);
  return m;
}

// track_event.proto TrackEvent: debug_annotations = 4, type = 9,
// track_uuid = 11, categories = 22, name = 23, counter_value = 30. Wrapped
// as TracePacket.track_event = 11.
ProtoMessage event_packet(const ProtoMessage& event) {
  ProtoMessage m;
  m.add_message(11, event);
  return m;
}

ProtoMessage slice_event(uint64_t type, uint64_t track, const std::string* name, const std::string* category,
                         const std::vector<std::pair<std::string, std::string>>* args) {
  ProtoMessage e;
  e.add_varint(9, type);
  e.add_varint(11, track);
  if (category != nullptr && !category->empty()) e.add_bytes(22, *category);
  if (name != nullptr) e.add_bytes(23, *name);
  if (args != nullptr)
    for (const auto& [k, v] : *args) e.add_message(4, annotation(k, v));
  return e;
}

// profile_common.proto InternedString: iid = 1, str = 2.
ProtoMessage interned_string(uint64_t iid, const std::string& s) {
  ProtoMessage m;
  m.add_varint(1, iid);
  m.add_bytes(2, s);
  return m;
}

std::string bytes_from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// The interned tables of the CPU samples' callstacks, built as samples
// are met; iids start at 1 (0 means unset).
class Interner {
 public:
  explicit Interner(const ExportModel& model) : model_(model) {}

  uint64_t callstack(uint32_t stack) {
    auto [it, added] = callstacks_.try_emplace(stack, callstacks_.size() + 1);
    if (!added) return it->second;
    // profile_common.proto Callstack: iid = 1, frame_ids = 2 (bottom frame
    // first: the root, as trace_processor builds callsites from index 0).
    std::vector<uint64_t> frame_ids;
    const Stack& s = model_.stacks[stack];
    for (auto l = s.locations.rbegin(); l != s.locations.rend(); ++l) {
      if (*l >= model_.locations.size()) continue;
      const Location& loc = model_.locations[*l];
      const size_t n = loc.frames.empty() ? 1 : loc.frames.size();
      for (size_t k = n; k-- > 0;) frame_ids.push_back(frame(*l, static_cast<uint32_t>(k)));
    }
    ProtoMessage m;
    m.add_varint(1, it->second);
    m.add_packed(2, frame_ids);
    data_.add_message(7, m);  // InternedData.callstacks = 7
    return it->second;
  }

  const ProtoMessage& data() const { return data_; }

 private:
  // One frame per inline level: they share the address and mapping.
  uint64_t frame(uint32_t location, uint32_t level) {
    auto [it, added] = frames_.try_emplace({location, level}, frames_.size() + 1);
    if (!added) return it->second;
    const Location& l = model_.locations[location];
    const Frame* f = l.frames.empty() ? nullptr : &l.frames[level];
    // profile_common.proto Frame: iid = 1, function_name_id = 2, mapping_id = 3, rel_pc = 4.
    ProtoMessage m;
    m.add_varint(1, it->second);
    m.add_varint(2, function_name(frame_label(model_, l, f)));
    m.add_varint(3, mapping(l.module));
    m.add_varint(4, l.module < model_.modules.size() ? l.address - model_.modules[l.module].bias : l.address);
    data_.add_message(6, m);  // InternedData.frames = 6
    return it->second;
  }

  uint64_t function_name(const std::string& name) {
    auto [it, added] = function_names_.try_emplace(name, function_names_.size() + 1);
    if (added) data_.add_message(5, interned_string(it->second, name));  // InternedData.function_names = 5
    return it->second;
  }

  // trace_processor wants every frame in a mapping: addresses outside every
  // module get one mapping of their own.
  uint64_t mapping(uint32_t module) {
    const bool known = module < model_.modules.size();
    auto [it, added] = mappings_.try_emplace(known ? module : kNoModule, mappings_.size() + 1);
    if (!added) return it->second;
    // profile_common.proto Mapping: iid = 1, build_id = 2, start = 4, end = 5,
    // load_bias = 6, path_string_ids = 7. rel_pc is the ELF address, so
    // load_bias stays 0.
    ProtoMessage m;
    m.add_varint(1, it->second);
    const std::string path = known ? model_.modules[module].path : "[unknown]";
    const uint64_t path_iid = next_path_iid_++;
    data_.add_message(17, interned_string(path_iid, path));  // InternedData.mapping_paths = 17
    if (known && !model_.modules[module].build_id.empty()) {
      const uint64_t build_iid = next_build_id_iid_++;
      data_.add_message(16, interned_string(build_iid, bytes_from_hex(model_.modules[module].build_id)));  // build_ids = 16
      m.add_varint(2, build_iid);
    }
    if (known) {
      m.add_varint(4, model_.modules[module].start);
      m.add_varint(5, model_.modules[module].limit);
    }
    m.add_varint(7, path_iid);
    data_.add_message(19, m);  // InternedData.mappings = 19
    return it->second;
  }

  const ExportModel& model_;
  ProtoMessage data_;  // interned_data.proto InternedData
  std::map<uint32_t, uint64_t> callstacks_;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> frames_;
  std::unordered_map<std::string, uint64_t> function_names_;
  std::map<uint32_t, uint64_t> mappings_;
  uint64_t next_path_iid_ = 1;
  uint64_t next_build_id_iid_ = 1;
};

}  // namespace

std::string perfetto_trace(const ExportModel& model) {
  // Intern first: the packet that clears the incremental state carries the
  // tables, and every sample after it refers to them.
  Interner interner(model);
  std::vector<uint64_t> sample_callstacks;
  for (const CpuSample& s : model.cpu_samples)
    sample_callstacks.push_back(s.stack < model.stacks.size() ? interner.callstack(s.stack) : 0);

  TraceFile file;
  ProtoMessage first;
  if (!interner.data().empty()) first.add_message(12, interner.data());  // TracePacket.interned_data = 12
  file.add(first, 0, false, kSeqIncrementalStateCleared);

  for (const Process& p : timeline_processes(model)) file.add(track_packet(process_track(p)), 0, false, 0);
  const std::vector<Thread> threads = timeline_threads(model);
  std::map<std::pair<uint32_t, uint32_t>, size_t> thread_index;
  for (size_t i = 0; i < threads.size(); ++i) {
    thread_index[{threads[i].pid, threads[i].tid}] = i;
    file.add(track_packet(thread_track(threads[i])), 0, false, 0);
  }

  // track_event.proto: flow_ids = 47 on the flow's first slice,
  // terminating_flow_ids = 48 on its last (repeated fixed64).
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint64_t>>> flows_of;  // slice -> (field, id)
  for (size_t f = 0; f < model.flows.size(); ++f) {
    const Flow& flow = model.flows[f];
    if (flow.from >= model.slices.size() || flow.to >= model.slices.size() || flow.from == flow.to) continue;
    flows_of[flow.from].push_back({47, f + 1});
    flows_of[flow.to].push_back({48, f + 1});
  }

  for (const SliceLane& lane : nest_slices(model.slices)) {
    uint64_t track = thread_uuid(lane.pid, lane.tid);
    if (lane.lane > 0) {
      track = lane_uuid(thread_index.at({lane.pid, lane.tid}), lane.lane);
      ProtoMessage descriptor;
      descriptor.add_varint(1, track);
      descriptor.add_bytes(2, "overlapping slices " + std::to_string(lane.lane));
      descriptor.add_varint(5, thread_uuid(lane.pid, lane.tid));
      file.add(track_packet(descriptor), 0, false, 0);
    }
    for (const SliceEdge& e : lane.edges) {
      const Slice& s = model.slices[e.slice];
      if (e.begin) {
        ProtoMessage begin = slice_event(kTypeSliceBegin, track, &s.name, &s.category, &s.args);
        if (auto f = flows_of.find(e.slice); f != flows_of.end())
          for (const auto& [field, id] : f->second) begin.add_fixed64(field, id);
        file.add(event_packet(begin), s.begin_ns, true, 0);
      } else
        file.add(event_packet(slice_event(kTypeSliceEnd, track, nullptr, nullptr, nullptr)),
                 std::max(s.end_ns, s.begin_ns), true, 0);
    }
  }

  for (const Instant& i : model.instants)
    file.add(event_packet(slice_event(kTypeInstant, thread_uuid(i.pid, i.tid), &i.name, &i.category, nullptr)),
             i.time_ns, true, 0);

  for (size_t c = 0; c < model.counters.size(); ++c) {
    const Counter& counter = model.counters[c];
    std::map<uint32_t, bool> described;
    for (const CounterValue& v : counter.values) {
      const uint64_t uuid = counter_uuid(c, v.pid);
      if (!described[v.pid]) {
        described[v.pid] = true;
        file.add(track_packet(counter_track(uuid, v.pid, counter)), 0, false, 0);
      }
      ProtoMessage e;
      e.add_varint(9, kTypeCounter);
      e.add_varint(11, uuid);
      e.add_int(30, v.value);
      file.add(event_packet(e), v.time_ns, true, 0);
    }
  }

  // profile_packet.proto PerfSample: pid = 2, tid = 3, callstack_iid = 4.
  // Wrapped as TracePacket.perf_sample = 66.
  for (size_t i = 0; i < model.cpu_samples.size(); ++i) {
    const CpuSample& s = model.cpu_samples[i];
    ProtoMessage sample;
    sample.add_varint(2, s.pid);
    sample.add_varint(3, s.tid);
    if (sample_callstacks[i] != 0) sample.add_varint(4, sample_callstacks[i]);
    ProtoMessage payload;
    payload.add_message(66, sample);
    file.add(payload, s.time_ns, true, kSeqNeedsIncrementalState);
  }
  return file.bytes();
}

}  // namespace spoor::exporter
