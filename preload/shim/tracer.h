// Whether a debugger or tracer (ptrace: gdb, strace) holds this process.
//
// A process under ptrace stops at every signal it is sent, and its tracer
// decides what to do: gdb stops the program and prints each real-time
// signal it does not know, strace prints a line for each. The sampling
// clocks' signal would turn a debugging session into one stop per
// millisecond of CPU time, so a process held from its start gets no
// clocks (samples.cpp) and says why (the SamplerOff event, a note to
// spoor record).
#ifndef SPOOR_PRELOAD_TRACER_H
#define SPOOR_PRELOAD_TRACER_H

#include <cstddef>
#include <cstdint>

namespace spoor::preload {

// The tracer's pid (TracerPid of /proc/self/status), 0 when none or
// unknown. `name` gets its command name (its /proc comm, "" when gone).
// Reads two small /proc files with raw calls (~15 us): once per image.
uint32_t ptrace_tracer(char* name, size_t name_size);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_TRACER_H
