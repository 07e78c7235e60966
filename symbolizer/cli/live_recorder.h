// Whether a trace is still being written: the `spoor record` that makes it
// (its own stream 0 names its pid) is alive and has the file open. `spoor
// report` and `spoor info` then say the recording goes on instead of that
// it did not finish, and `spoor dump --follow` knows when to stop waiting.
#ifndef SPOOR_CLI_LIVE_RECORDER_H
#define SPOOR_CLI_LIVE_RECORDER_H

#include <cstdint>
#include <string>

#include "spoor/reader/trace.h"

namespace spoor::cli {

// True once the recorder has finished the trace: every stream it announced
// has its STREAM_END (the recorder ends its own stream last, after every
// traced process's), and the file is undamaged.
bool recording_finished(const reader::Trace& trace);

// The pid of the `spoor record` writing `trace` (its own stream, stream 0,
// belongs to a process it names "spoor"); 0 when the trace does not say.
uint32_t recorder_pid(const reader::Trace& trace);

// Whether process `pid` has ended: gone, or a zombie no one has reaped yet
// (where no init reaps orphans). False for pid 0.
bool recorder_gone(uint32_t pid);

// The pid of the recorder still writing the trace at `path`, or 0 when the
// recording has finished, its recorder is gone, or the pid now belongs to
// a process that does not have the file open (a pid reused since).
uint32_t live_recorder(const reader::Trace& trace, const std::string& path);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_LIVE_RECORDER_H
