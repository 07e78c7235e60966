// The shared-memory region `spoor record` creates for each traced process
// and the preloaded library maps: one memfd (mode 0600) holding a header,
// the process's per-CPU rings, its control block, and a metadata log. No
// pointers: both sides compute addresses from the offsets. protocol.h says
// how the process gets it.
//
//   recorder                          traced process (libspoor-preload.so)
//   ---------                         ------------------------------------
//   create the memfd, lay out the
//   header, rings and control block;
//   hand it over                      map it, open the rings, move the
//                                     control block there, append its
//                                     PROCESS/PROVIDER/EVENT blocks to the
//                                     metadata log, publish its length
//   copy new metadata bytes to the
//   file, then drain the rings; when
//   the process ends (even by a
//   signal), flush and drain what
//   was committed
#ifndef SPOOR_PRELOAD_SHARED_REGION_H
#define SPOOR_PRELOAD_SHARED_REGION_H

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace spoor::preload {

inline constexpr uint32_t kRegionMagic = 0x4E474552u;  // "REGN"
inline constexpr uint32_t kRegionVersion = 6;  // 6: time_grain_ticks

struct RegionHeader {
  uint32_t magic;
  uint32_t version;
  uint64_t total_size;
  uint64_t ring_offset, ring_size;
  uint64_t control_offset, control_size;
  uint64_t metadata_offset, metadata_capacity;
  // Bytes of complete blocks in the metadata log. The traced process appends
  // a block, then stores the new length with release; the recorder loads it
  // with acquire and copies what is new.
  std::atomic<uint64_t> metadata_length;
  // The pid that attached, stored once its metadata is published.
  std::atomic<uint32_t> attached_pid;
  // Set by the recorder when nothing more can reach the trace (its file
  // failed): the process turns every provider off. The recorder also turns
  // off the control block's levels; a process attaching meanwhile looks
  // here after applying its own rules (seq_cst on both sides, so one of
  // the two is seen last).
  std::atomic<uint32_t> tracing_off;
  // Of the events counted lost in the rings, those that were calls of a
  // signal handler that interrupted the shim, which cannot be recorded
  // there (a stdio call, say): the recorder tells the user which it was.
  std::atomic<uint64_t> handler_calls_lost;
  // Of the same, allocations made before the shim attached, past what its
  // pre-attach log keeps (preload/shim/pre_attach_log.h).
  std::atomic<uint64_t> pre_attach_calls_lost;
  // Written before the region is handed over: the process rounds its
  // records' times down to a multiple of this many ticks, a power of two
  // (spoor record --time-resolution; the trace's CLOCK blocks say it too).
  uint64_t time_grain_ticks;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

inline constexpr uint64_t align_region(uint64_t v) { return (v + 4095) & ~uint64_t{4095}; }

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SHARED_REGION_H
