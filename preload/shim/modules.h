// The modules (executable, shared objects, vDSO) of the traced process:
// ModuleLoad and ModuleUnload events with the path, load bias and GNU build
// ID the symbolizer needs to turn stack addresses into functions.
#ifndef SPOOR_PRELOAD_MODULES_H
#define SPOOR_PRELOAD_MODULES_H

#include <cstdint>

#include "../process_events.h"

namespace spoor::preload {

// Describes every loaded module not described yet, and the unloads of
// described ones that are gone. Called at attach and, after a dlopen or
// dlclose, from the next hook (see note_modules_changed). Not reentrant:
// callers hold the reentry guard.
void scan_modules();

// The executable's path (readlink of /proc/self/exe), as the first
// scan_modules() read it: "" before it.
const char* executable_path();

// In a fork child: the modules are described again, in the child's own
// streams, by the next scan_modules(), from what the parent's scans kept
// of them (the child reads no module's pages for it).
void describe_modules_again_after_fork();

// Marks the module list as possibly changed; the next hook rescans.
void note_modules_changed();
// Rescans if marked; one relaxed load otherwise.
void rescan_modules_if_changed();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_MODULES_H
