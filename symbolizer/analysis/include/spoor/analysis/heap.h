// Heap analysis: Spoor.Heap's Alloc, Free and Realloc replayed per image
// (a process's program from its start or an exec to the next exec or its
// end), as heaptrack counts them: bytes live over time and its peak,
// totals, allocation sites (by stack) with their bytes, calls, temporary
// allocations, contribution at the peak and leaks. A process that never
// execs has one image: its figures are the process's.
//
// Definitions:
// - realloc counts as a call of its own; its new block as an allocation of
//   `size` bytes and its old block as freed (a failed realloc changes
//   nothing; realloc(p, 0) returning null frees p).
// - temporary: a block freed with no other allocation in the process
//   between its allocation and its free (heaptrack's definition, by the
//   block's address: heaptrack's own count compares the freed block's
//   size and stack with the last allocation's, so it also counts the free
//   of an older block from the same site with the same size, and comes
//   out higher: 40,371 against 372 of sqlite3's 62,325 calls building a
//   20,000-row table).
// - peak: the most bytes live at once; a site's peak bytes are its bytes
//   live at that moment (the first time the peak was reached).
// - leaked: allocated by the image and live when the process ended.
// - released by exec: allocated by the image and live when an exec replaced
//   it (the new image starts with an empty heap: not a leak).
// - inherited: a fork child's first image starts with a copy of its
//   parent's live blocks at the Fork event (not posix_spawn's children,
//   which begin a new image; nor vfork's, which the trace has no Fork
//   for). Its frees of them are known frees; those it never frees are
//   counted apart, never as leaks, and no inherited block counts in the
//   image's allocated, live or peak bytes (the parent allocated them).
// - bytes live over time: the image's own blocks (as the peak), from the
//   image's start to its end (the process's exit or exec); the leaked
//   bytes stay live to the end.
// - a free of a block the trace never saw allocated (allocated before the
//   recording or before the shim attached in that image, or its Alloc
//   lost) counts as a call and changes no bytes.
#ifndef SPOOR_ANALYSIS_HEAP_H
#define SPOOR_ANALYSIS_HEAP_H

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spoor/analysis/load.h"

namespace spoor::analysis {

struct HeapSite {
  StackKey stack = 0;  // 0: allocations recorded without a stack
  uint64_t allocated_bytes = 0;
  uint64_t calls = 0;  // allocations (Alloc, and Realloc that returned a block)
  uint64_t temporary = 0;
  uint64_t peak_bytes = 0;  // live at the process's peak
  uint64_t leaked_bytes = 0;
  uint64_t leaked_blocks = 0;
};

// Bucket i holds sizes in [2^(i-1), 2^i); bucket 0 holds size 0.
inline constexpr size_t kSizeBuckets = 65;
size_t size_bucket(uint64_t size);

// Bytes live over the image's life, from its start to its end, in columns
// of equal time (a power of two of nanoseconds): each the most bytes live
// at any moment in it. What massif's and heaptrack_gui's charts draw.
inline constexpr size_t kHeapTimelineColumns = 64;
struct HeapTimeline {
  int64_t start_ns = 0;
  int64_t column_ns = 0;  // 0: no timeline (the image allocated nothing)
  // At most kHeapTimelineColumns, at least half as many for an image
  // longer than that many nanoseconds.
  std::vector<uint64_t> most_live_bytes;
};

struct HeapProfile {
  ProcessIndex process = kNone;
  ImageIndex image = kNone;
  bool ended_by_exec = false;  // an exec replaced the image (else the process ended)
  // The object whose malloc the image called when it was not Spoor's hook
  // (OwnAllocator): its allocator calls are not in the trace. "" otherwise.
  std::string own_allocator;
  uint64_t allocated_bytes = 0;
  uint64_t alloc_calls = 0;    // Alloc events
  uint64_t free_calls = 0;     // Free events, null frees included
  uint64_t realloc_calls = 0;  // Realloc events
  uint64_t temporary = 0;
  uint64_t peak_bytes = 0;
  int64_t peak_ns = 0;
  uint64_t leaked_bytes = 0;
  uint64_t leaked_blocks = 0;
  uint64_t released_by_exec_bytes = 0;  // the image's own blocks live at its exec
  uint64_t released_by_exec_blocks = 0;
  uint64_t inherited_bytes = 0;  // the parent's live blocks at the fork
  uint64_t inherited_blocks = 0;
  uint64_t inherited_freed_bytes = 0;  // of those, freed (or realloc'd) by the image
  uint64_t inherited_freed_blocks = 0;
  uint64_t inherited_kept_bytes = 0;  // of those, live at the image's end
  uint64_t inherited_kept_blocks = 0;
  uint64_t unknown_frees = 0;  // frees of blocks never seen allocated
  uint64_t mmap_calls = 0;     // the program's own mappings (not in the heap figures)
  uint64_t mmap_bytes = 0;
  uint64_t munmap_calls = 0;
  std::array<uint64_t, kSizeBuckets> size_histogram{};  // allocations per size bucket
  HeapTimeline timeline;
  std::vector<HeapSite> sites;  // in order of first allocation
};

class HeapAnalysis final : public EventVisitor {
 public:
  HeapAnalysis();
  HeapAnalysis(HeapAnalysis&&) noexcept;
  HeapAnalysis& operator=(HeapAnalysis&&) noexcept;
  ~HeapAnalysis() override;

  // Cost per heap event: one hash lookup of the block's address (plus one
  // of the site for allocations); other events return after one compare.
  // A Fork copies the parent's live blocks (one pass over them) for the
  // child; a fork child's first heap event takes them in.
  void on_event(const reader::Event& event, const EventContext& context) override;
  void on_end(const TraceModel& model) override;

  // One per image that made any heap call, in order of their first one.
  // Complete after on_end.
  const std::vector<HeapProfile>& profiles() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_HEAP_H
