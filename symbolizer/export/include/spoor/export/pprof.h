// pprof's profile.proto, gzip-compressed, which `go tool pprof`, speedscope
// and most profile viewers read.
#ifndef SPOOR_EXPORT_PPROF_H
#define SPOOR_EXPORT_PPROF_H

#include <optional>
#include <string>

#include "spoor/export/export_model.h"

namespace spoor::exporter {

// One sample per stack with six values, in this order: samples/count and
// cpu/nanoseconds (CPU samples; cpu = the periods they stand for x the
// sampling period),
// alloc_objects/count and alloc_space/bytes (every allocation of the trace),
// inuse_objects/count and inuse_space/bytes (what was not freed by the end).
// The viewer's default is the last type, inuse_space, unless the model has
// no allocations, where it is cpu. Locations are the model's, leaf first,
// inlined functions before the function they were inlined into.
std::string pprof_profile_proto(const ExportModel& model);

// The same, gzip-compressed as the format wants it on disk; nullopt when
// compression fails.
std::optional<std::string> pprof_profile(const ExportModel& model);

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_PPROF_H
