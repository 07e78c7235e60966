// spoor symbolize --trace: every stack of a trace, symbolized.
#ifndef SPOOR_CLI_SYMBOLIZE_TRACE_H
#define SPOOR_CLI_SYMBOLIZE_TRACE_H

#include <string>

#include "addr2line_format.h"
#include "spoor/symbolizer/symbolizer.h"

namespace spoor::cli {

// Prints each process's (and exec image's) stacks with their frames.
// Returns the exit status.
int symbolize_trace(const std::string& path, const symbolizer::Options& options, const Addr2lineStyle& style);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_SYMBOLIZE_TRACE_H
