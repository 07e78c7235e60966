// Field numbers from google/pprof proto/profile.proto (package
// perftools.profiles), cited beside each message's writer.
#include "spoor/export/pprof.h"

#include <array>
#include <algorithm>
#include <map>
#include <unordered_map>

#include "gzip.h"
#include "proto_writer.h"

namespace spoor::exporter {
namespace {

// profile.proto: string_table[0] must be "".
class StringTable {
 public:
  StringTable() { index(""); }
  int64_t index(const std::string& s) {
    auto [it, added] = ids_.try_emplace(s, static_cast<int64_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> strings_;
};

// profile.proto `message ValueType { int64 type = 1; int64 unit = 2; }`
ProtoMessage value_type(StringTable& strings, const char* type, const char* unit) {
  ProtoMessage m;
  m.add_int(1, strings.index(type));
  m.add_int(2, strings.index(unit));
  return m;
}

constexpr size_t kValues = 6;
using Values = std::array<int64_t, kValues>;

}  // namespace

std::string pprof_profile_proto(const ExportModel& model) {
  StringTable strings;
  ProtoMessage profile;

  // profile.proto Profile.sample_type = 1.
  static constexpr std::array<std::array<const char*, 2>, kValues> kTypes = {{{"samples", "count"},
                                                                              {"cpu", "nanoseconds"},
                                                                              {"alloc_objects", "count"},
                                                                              {"alloc_space", "bytes"},
                                                                              {"inuse_objects", "count"},
                                                                              {"inuse_space", "bytes"}}};
  for (const auto& [type, unit] : kTypes) profile.add_message(1, value_type(strings, type, unit));

  std::map<uint32_t, Values> per_stack;
  for (const CpuSample& s : model.cpu_samples) {
    Values& v = per_stack[s.stack];
    v[0] += 1;
    v[1] += model.sample_period_ns * s.periods;
  }
  for (const AllocationSite& a : model.allocations) {
    Values& v = per_stack[a.stack];
    v[2] += static_cast<int64_t>(a.alloc_calls);
    v[3] += static_cast<int64_t>(a.alloc_bytes);
    v[4] += static_cast<int64_t>(a.live_blocks);
    v[5] += static_cast<int64_t>(a.live_bytes);
  }

  // profile.proto `message Sample { repeated uint64 location_id = 1; repeated int64 value = 2; }`
  // Location ids are model indexes + 1: ids are never 0.
  for (const auto& [stack, values] : per_stack) {
    if (stack >= model.stacks.size()) continue;
    std::vector<uint64_t> ids;
    for (uint32_t l : model.stacks[stack].locations)
      if (l < model.locations.size()) ids.push_back(uint64_t{l} + 1);
    std::vector<uint64_t> raw(values.begin(), values.end());  // int64 is a plain varint on the wire
    ProtoMessage sample;
    sample.add_packed(1, ids);
    sample.add_packed(2, raw);
    profile.add_message(2, sample);
  }

  // profile.proto `message Mapping { uint64 id = 1; uint64 memory_start = 2; uint64 memory_limit = 3;
  // uint64 file_offset = 4; int64 filename = 5; int64 build_id = 6; bool has_functions = 7;
  // bool has_filenames = 8; bool has_line_numbers = 9; bool has_inline_frames = 10; }`
  // pprof names the profile after its first mapping ("File: ..."), so the
  // first process's executable goes first; ids keep the model's order. The
  // executable is the file its last image ran (a command line may name a
  // link to it: python3 for python3.11); where no module is that file, the
  // one its command names.
  std::vector<size_t> order(model.modules.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const Process* first = model.processes.empty() ? nullptr : &model.processes.front();
  auto is_exe = [&](size_t i) {
    const Module& m = model.modules[i];
    return m.pid == first->pid && !first->exe.empty() && m.path == first->exe;
  };
  auto named_by_command = [&](size_t i) {
    const Module& m = model.modules[i];
    const std::string& exe = first->cmdline.empty() ? first->name : first->cmdline.front();
    return m.pid == first->pid && !exe.empty() &&
           (m.path == exe || m.path.ends_with("/" + exe.substr(exe.rfind('/') + 1)));
  };
  if (first != nullptr) {
    if (std::any_of(order.begin(), order.end(), is_exe))
      std::stable_partition(order.begin(), order.end(), is_exe);
    else
      std::stable_partition(order.begin(), order.end(), named_by_command);
  }
  for (size_t i : order) {
    const Module& m = model.modules[i];
    ProtoMessage mapping;
    mapping.add_varint(1, i + 1);
    mapping.add_varint(2, m.start);
    mapping.add_varint(3, m.limit);
    // The ELF address of the first mapped byte: the file offset for the
    // usual first PT_LOAD at offset 0 (only symbolizing tools read it, and
    // every location already carries its functions).
    mapping.add_varint(4, m.start - m.bias);
    mapping.add_int(5, strings.index(m.path));
    if (!m.build_id.empty()) mapping.add_int(6, strings.index(m.build_id));
    // Every location gets a function (a module+offset name when it has no
    // symbol), so pprof never tries to symbolize on its own.
    mapping.add_varint(7, 1);
    mapping.add_varint(8, 1);
    mapping.add_varint(9, 1);
    mapping.add_varint(10, 1);
    profile.add_message(3, mapping);
  }

  // Functions by (name, file): inlined copies of one function are one function.
  std::map<std::pair<std::string, std::string>, uint64_t> function_ids;
  auto function_id = [&](const std::string& name, const std::string& file) {
    auto [it, added] = function_ids.try_emplace({name, file}, function_ids.size() + 1);
    return it->second;
  };

  // profile.proto `message Location { uint64 id = 1; uint64 mapping_id = 2; uint64 address = 3;
  // repeated Line line = 4; }` and `message Line { uint64 function_id = 1; int64 line = 2; }`:
  // the last line is the caller the ones before it were inlined into.
  for (size_t i = 0; i < model.locations.size(); ++i) {
    const Location& l = model.locations[i];
    ProtoMessage location;
    location.add_varint(1, i + 1);
    if (l.module < model.modules.size()) location.add_varint(2, uint64_t{l.module} + 1);
    location.add_varint(3, l.address);
    auto add_line = [&](const Frame* f) {
      ProtoMessage line;
      line.add_varint(1, function_id(frame_label(model, l, f), f != nullptr ? f->file : std::string()));
      if (f != nullptr && f->line != 0) line.add_int(2, f->line);
      location.add_message(4, line);
    };
    if (l.frames.empty()) add_line(nullptr);
    for (const Frame& f : l.frames) add_line(&f);
    profile.add_message(4, location);
  }

  // profile.proto `message Function { uint64 id = 1; int64 name = 2; int64 system_name = 3;
  // int64 filename = 4; int64 start_line = 5; }`
  std::vector<const std::pair<const std::pair<std::string, std::string>, uint64_t>*> by_id(function_ids.size());
  for (const auto& entry : function_ids) by_id[entry.second - 1] = &entry;
  for (const auto* entry : by_id) {
    ProtoMessage function;
    function.add_varint(1, entry->second);
    function.add_int(2, strings.index(entry->first.first));
    function.add_int(3, strings.index(entry->first.first));
    if (!entry->first.second.empty()) function.add_int(4, strings.index(entry->first.second));
    profile.add_message(5, function);
  }

  // Profile.time_nanos = 9 is wall-clock time, which the model does not
  // carry; duration_nanos = 10, period_type = 11, period = 12.
  if (model.last_ns > model.first_ns) profile.add_int(10, model.last_ns - model.first_ns);
  profile.add_message(11, value_type(strings, "cpu", "nanoseconds"));
  if (model.sample_period_ns > 0) profile.add_int(12, model.sample_period_ns);
  // default_sample_type = 14: without it viewers show the last type, inuse_space.
  if (model.allocations.empty()) profile.add_int(14, strings.index("cpu"));

  // string_table = 6, last: every index above is known by now.
  for (const std::string& s : strings.strings()) profile.add_bytes(6, s);
  return profile.bytes();
}

std::optional<std::string> pprof_profile(const ExportModel& model) { return gzip(pprof_profile_proto(model)); }

}  // namespace spoor::exporter
