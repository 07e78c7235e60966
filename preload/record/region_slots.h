// Where the recorder maps the traced processes' regions: slots of one
// reserved range, so that the regions of short processes, once finished,
// are unmapped a chunk at a time. Unmapping a region the recorder has
// read cost its drain thread more than anything else it did for a short
// process: the kernel flushes the TLB of every CPU the recorder's threads
// ran on, an interrupt to the other CPU each time (~0.3 ms a process on
// the benchmark VM, bench/RESULTS.md); one unmapping of a chunk does it
// once for all its regions.
#ifndef SPOOR_PRELOAD_RECORD_REGION_SLOTS_H
#define SPOOR_PRELOAD_RECORD_REGION_SLOTS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spoor::record {

class RegionSlots {
 public:
  RegionSlots() = default;
  RegionSlots(const RegionSlots&) = delete;
  RegionSlots& operator=(const RegionSlots&) = delete;
  ~RegionSlots();

  // Reserves `slots` slots of `slot_bytes` (a multiple of the page size),
  // released `chunk` at a time (a divisor of `slots`), as address space
  // only (PROT_NONE, no memory). At most `most_deferred` bytes of finished
  // regions wait for their chunk. False when the range cannot be reserved.
  bool reserve(size_t slot_bytes, size_t slots, size_t chunk, size_t most_deferred);
  bool reserved() const { return base_ != nullptr; }
  size_t slot_bytes() const { return slot_bytes_; }

  // A free slot for a region of `bytes`, to map over with MAP_FIXED;
  // nullptr when none is free or `bytes` is not the slot size (the caller
  // maps where the kernel chooses, and unmaps as usual).
  void* take(size_t bytes);

  // The region mapped at `slot` (from take) is finished; `touched_bytes`
  // is how much of it may hold pages. Up to `most_deferred` in all, a
  // finished region stays mapped until no region of its chunk is live,
  // and the chunk is then unmapped at once; a larger one (or past that
  // budget) is unmapped now. Either way the slot is free again after.
  void give_back(void* slot, size_t touched_bytes);

  // Bytes of finished regions still mapped, waiting for their chunk.
  size_t deferred_bytes() const { return deferred_; }
  // Unmappings done (a chunk or a single slot each), for tests.
  size_t unmappings() const { return unmappings_; }

 private:
  enum class State : uint8_t { free, live, finished };
  bool release(size_t first, size_t count);  // PROT_NONE again over the slots
  void release_if_done(size_t chunk);
  uint8_t* base_ = nullptr;
  size_t slot_bytes_ = 0, chunk_ = 0, most_deferred_ = 0;
  std::vector<State> state_;
  std::vector<size_t> touched_;  // per finished slot: its deferred bytes
  size_t cursor_ = 0;
  size_t deferred_ = 0;
  size_t unmappings_ = 0;
};

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_REGION_SLOTS_H
