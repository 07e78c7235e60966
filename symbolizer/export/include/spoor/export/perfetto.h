// Perfetto's protobuf trace (a file of TracePacket messages, each as field
// 1 of the Trace message), which ui.perfetto.dev and trace_processor open.
#ifndef SPOOR_EXPORT_PERFETTO_H
#define SPOOR_EXPORT_PERFETTO_H

#include <string>

#include "spoor/export/export_model.h"

namespace spoor::exporter {

// One packet sequence (id 1) holding, in order: a packet that clears the
// sequence's incremental state and carries the interned callstacks of the
// CPU samples (function names, mapping paths, build IDs, mappings, frames,
// callstacks); a TrackDescriptor per process, thread, extra slice lane
// (slices that overlap without nesting) and counter; slices as TrackEvent
// TYPE_SLICE_BEGIN/END pairs; instants (TYPE_INSTANT); counter values
// (TYPE_COUNTER); one PerfSample per CPU sample.
//
// Track UUIDs: process (1 << 56) | pid, thread (2 << 56) | pid << 24 | tid,
// lane (3 << 56) | thread index << 16 | lane, counter (4 << 56) | counter
// index << 32 | pid.
std::string perfetto_trace(const ExportModel& model);

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_PERFETTO_H
