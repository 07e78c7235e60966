// One traced process's shared region (shared_region.h) on the recorder's
// side: the memfd (mode 0600) and its mapping, laid out for the process to
// map, and the copy of its metadata log into the trace.
#ifndef SPOOR_PRELOAD_RECORD_REGION_H
#define SPOOR_PRELOAD_RECORD_REGION_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../shared_region.h"
#include "spoor/ring.h"
#include "spoor/trace_writer.h"

namespace spoor::record {

struct RegionLayout {
  uint32_t cpus = 1;
  size_t buffer_bytes_per_cpu = 4u << 20;
  uint32_t packet_bytes = 128u << 10;
  uint64_t time_grain_ticks = 1;  // time_grain.h; for the region's header
};

class Region {
 public:
  Region() = default;
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region();

  // Creates the memfd and lays out header, rings and control block. Pages
  // are touched only as the process uses them.
  bool create(const RegionLayout& layout, std::string* error);

  int fd() const { return fd_; }
  const RingView& ring() const { return ring_; }
  preload::RegionHeader& header() { return *header_; }

  // Writes the metadata blocks the process published since the last call
  // (a failed write shows in the sink's own error, as packets' do).
  void copy_new_metadata(Sink sink);

  // Allocates the pages of each CPU's ring a little ahead of its writers
  // during the first lap (as far ahead as they have written, 32 KiB to
  // 4 MiB), so the program's first write to a page finds it allocated and
  // zeroed: its fault only maps the page. A shared-memory page allocated
  // by the faulting writer cost it several microseconds here (memory
  // cgroup charge, zeroing), ~4,000 of them per 16 MiB ring: a sizeable
  // part of a short allocation-heavy program's traced time. Costs the
  // recorder one madvise per call that moves on; rings of CPUs the process
  // never wrote on stay untouched.
  void populate_ahead();

  // Turns every provider of the process off, for good: nothing more can
  // reach the trace. Its hooks then cost what they cost untraced, bar a
  // load and a branch.
  void switch_tracing_off();

 private:
  // How much of the region may hold pages: what its header, metadata and
  // rings' writers and populate_ahead reached.
  size_t touched_bytes() const;
  // Bytes into `cpu`'s ring its writers have reached (at most the ring).
  uint64_t writers_reach(uint32_t cpu) const;

  int fd_ = -1;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  bool in_slot_ = false;  // mapped in a slot of region_slots.h's range
  preload::RegionHeader* header_ = nullptr;
  RingView ring_;
  uint64_t metadata_copied_ = 0;
  std::vector<uint64_t> populated_;  // per CPU: bytes of its ring allocated by populate_ahead
};

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_REGION_H
