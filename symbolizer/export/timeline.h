// What the timeline formats (Perfetto, Chrome JSON) share: the processes
// and threads every event refers to, and slices arranged so that they nest
// on each track, as both viewers require of begin/end pairs.
#ifndef SPOOR_EXPORT_TIMELINE_H
#define SPOOR_EXPORT_TIMELINE_H

#include <cstdint>
#include <string>
#include <vector>

#include "spoor/export/export_model.h"

namespace spoor::exporter {

// Every process and thread of the model, named where the model names them,
// including those only events mention; sorted by pid (then tid).
std::vector<Process> timeline_processes(const ExportModel& model);
std::vector<Thread> timeline_threads(const ExportModel& model);

struct SliceEdge {
  uint32_t slice;  // index into ExportModel::slices
  bool begin;      // false: the slice's end
};

// The slices of one thread that nest. Lane 0 is the thread's own track; a
// slice that overlaps another without nesting in it (two activities that
// interleave) goes to lane 1, 2, ..., the first where it nests.
struct SliceLane {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t lane = 0;
  std::vector<SliceEdge> edges;  // begins and ends in the order to write them
};

// Lanes sorted by (pid, tid, lane). Within a lane, a slice begins after its
// parent begins and ends before (or when) its parent ends; slices with equal
// begin times put the longer one outside.
std::vector<SliceLane> nest_slices(const std::vector<Slice>& slices);

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_TIMELINE_H
