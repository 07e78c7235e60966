// spoor dump --follow: the events of a recording still being written, as
// they reach its file or pipe, the way an ETW real-time consumer takes
// buffers as the session flushes them.
#ifndef SPOOR_CLI_DUMP_FOLLOW_H
#define SPOOR_CLI_DUMP_FOLLOW_H

#include <string>

#include "event_lines.h"

namespace spoor::cli {

// Reads the file at `path` again as it grows (waiting up to 5 s for it to
// appear) and prints each stream's events past those printed before, until
// every stream the recorder announced has its STREAM_END, or the recorder
// is gone (killed) and the file grows no more. Returns the exit status:
// kExitOk, or kExitTrace when the file cannot be read, shrinks, ends
// damaged or unfinished.
int follow_file(const std::string& path, const EventLines& lines);

// The same for a trace arriving on `fd` (spoor record -o - | spoor dump
// --follow -), until the recording finishes or the pipe closes.
int follow_pipe(int fd, const EventLines& lines);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_DUMP_FOLLOW_H
