// The shim's side of protocol.h: asks spoor record for this process's
// region. The settings that came from the recorder's environment (the
// socket name, the SPOOR_* variables, the shim's own path) are captured once
// per image, so fork children and exec hooks use them even after the
// program changed its environment.
#ifndef SPOOR_PRELOAD_RECORDER_LINK_H
#define SPOOR_PRELOAD_RECORDER_LINK_H

#include <cstddef>
#include <cstdint>

#include "../protocol.h"

namespace spoor::preload {

// Reads $SPOOR_SOCKET and the other SPOOR_* variables. False when the
// process is not under spoor record (the shim then stays inert).
bool capture_link_settings();

// Connects and asks for this process's region. On success *connection is
// the open connection (close-on-exec; keep it open while this image lives),
// *region_fd the region's memfd and *rule_store_fd the recording's rule
// store (-1 when the recorder has none). False when the recorder is gone,
// refused, or answered not_traced.
bool request_region(Welcome* welcome, int* connection, int* region_fd, int* rule_store_fd);

// Tells the recorder, over `connection`, that this process is about to
// exec `path`, which cannot be traced (`why`). Best effort, never blocks.
void note_untraceable(int connection, const char* path, const char* why);
// The exec or spawn note_untraceable announced failed: the program never
// ran. Keeps errno.
void note_exec_failed(int connection, const char* path, const char* why);
// Tells spoor record that this image's malloc is its own, defined in `owner`.
void note_own_allocator(int connection, const char* owner);
// Tells spoor record that `program` gets no CPU samples: `tracer` (a
// debugger's or tracer's name) held it from its start.
void note_samples_off(int connection, const char* program, const char* tracer);

// The variables an exec'd program needs to be traced in turn, as
// "NAME=value" strings: LD_PRELOAD (the shim first) and the
// kTracingVariables captured at load. Null-terminated array; empty when inert.
const char* const* tracing_environment();

// The value of the tracing variable `name` (a kTracingVariables entry,
// "SPOOR_PROVIDERS=") as captured at load, or null. The program's own
// environment no longer holds it (hide_tracing_environment).
const char* tracing_setting(const char* name);

// This library's own path as LD_PRELOAD names it, or null when inert.
const char* shim_preload_path();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_RECORDER_LINK_H
