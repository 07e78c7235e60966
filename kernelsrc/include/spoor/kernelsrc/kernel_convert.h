// One perf record in, Spoor.Kernel records out (kernel_events.h). Knows
// every opened event by its PERF_SAMPLE_IDENTIFIER, to read each record
// with the sample_type (and tracepoint layout) of the event it came from.
// Records it cannot parse are counted, never misread.
#ifndef SPOOR_KERNELSRC_KERNEL_CONVERT_H
#define SPOOR_KERNELSRC_KERNEL_CONVERT_H

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "spoor/kernelsrc/attr_plan.h"
#include "spoor/kernelsrc/kernel_stream.h"
#include "spoor/kernelsrc/perf_record.h"
#include "spoor/kernelsrc/tracefs.h"

namespace spoor::kernelsrc {

// Where the fields a role needs sit in its tracepoint's RAW data.
struct RawLayout {
  std::vector<TracepointField> fields;  // in the order the role reads them
  bool complete = false;                // every field it needs was found
};
// The layout for `role` from its tracepoint's format (false `complete` when
// a field is missing: that kernel changed the tracepoint).
RawLayout raw_layout(Role role, const TracepointFormat& format);

struct EventMeta {
  Role role = Role::sideband;
  std::string source;
  std::string syscall;
  uint64_t sample_type = 0;
  uint64_t regs_mask = 0;
  RawLayout raw;
};

class KernelConvert {
 public:
  // Called for every MMAP2 the kernel reported (so synthesised ones skip it).
  using OnMmap = std::function<void(uint64_t start, std::string_view path)>;

  void add_event(uint64_t id, const EventMeta& meta) {
    events_[id] = meta;
    recent_ = {};  // std::map keeps its nodes, but an id may now name another
  }
  void set_on_mmap(OnMmap f) { on_mmap_ = std::move(f); }

  // Converts one record of the ring of `cpu` into `out`. Returns false (and
  // counts it in corrupt()) when the record is not what its event implies.
  bool convert(Bytes record, uint32_t cpu, const std::function<uint64_t(uint64_t)>& ticks, TraceWriter& writer,
               KernelStream& out);

  // The kernel's time of `record` (CLOCK_MONOTONIC ns). False for a record
  // of no event of ours or one too short to hold it.
  bool time_of(Bytes record, uint64_t* time_ns) const;

  uint64_t corrupt() const { return corrupt_; }

  // Every kernel address converted so far: the kernel frames of CPU
  // samples and the kernel instructions page faults hit, each once
  // (kernel_symbols.h names them at the end).
  const std::unordered_set<uint64_t>& kernel_addresses() const { return kernel_addresses_; }

 private:
  bool sample(const EventMeta& m, Bytes record, TraceWriter& w, KernelStream& out,
              const std::function<uint64_t(uint64_t)>& ticks);

  // The event of id `id`, nullptr for none: the map behind a direct-mapped
  // cache, as every record is looked up twice (time_of, then convert) and
  // a CPU's records come from a handful of events (ids given in sequence).
  const EventMeta* event_of(uint64_t id) const {
    Recent& r = recent_[id % kRecentSlots];
    if (r.meta != nullptr && r.id == id) return r.meta;
    const auto it = events_.find(id);
    if (it == events_.end()) return nullptr;
    r = Recent{id, &it->second};
    return r.meta;
  }

  std::map<uint64_t, EventMeta> events_;
  static constexpr size_t kRecentSlots = 16;
  struct Recent {
    uint64_t id = 0;
    const EventMeta* meta = nullptr;
  };
  mutable std::array<Recent, kRecentSlots> recent_{};
  OnMmap on_mmap_;
  uint64_t corrupt_ = 0;
  std::vector<uint64_t> user_, kernel_;  // callchain scratch
  std::unordered_set<uint64_t> kernel_addresses_;
};

// The name of x86-64 (this build's) syscall `nr`, or "" when unknown.
const char* syscall_name(uint64_t nr);

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KERNEL_CONVERT_H
