// Chrome's Trace Event Format (JSON), which chrome://tracing, Perfetto's UI
// and speedscope open: process and thread names (ph M), slices as properly
// nested B/E pairs per thread, instants (i), counters (C); ts in µs.
#ifndef SPOOR_EXPORT_CHROME_JSON_H
#define SPOOR_EXPORT_CHROME_JSON_H

#include <string>

#include "spoor/export/export_model.h"

namespace spoor::exporter {

// The JSON document `{"traceEvents": [...], "displayTimeUnit": "ns"}`.
// Slices that overlap without nesting go to a pseudo-thread per extra lane
// (tid 0x40000000 and up, above any Linux pid_max), named after the thread.
// CPU samples are left out (Perfetto ignores the format's stackFrames).
std::string chrome_trace_json(const ExportModel& model);

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_CHROME_JSON_H
