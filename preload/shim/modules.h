// The modules (executable, shared objects, vDSO) of the traced process:
// ModuleLoad and ModuleUnload events with the path, load bias and GNU build
// ID the symbolizer needs to turn stack addresses into functions.
#ifndef SPOOR_PRELOAD_MODULES_H
#define SPOOR_PRELOAD_MODULES_H

#include <cstdint>

#include "spoor/event.h"

namespace spoor::preload {

inline constexpr uint64_t kKeywordModules = 0x2;

SPOOR_DECLARE_PROVIDER(g_process);

SPOOR_EVENT(kModuleLoad, g_process,
            (EventInfo{.name = "ModuleLoad", .id = 1, .level = Level::always, .keywords = kKeywordModules}),
            Field<Ptr>{"bias"}, Field<Ptr>{"start"}, Field<uint64_t>{"size"}, Field<Str>{"path"},
            Field<Blob>{"build_id"});
SPOOR_EVENT(kModuleUnload, g_process,
            (EventInfo{.name = "ModuleUnload", .id = 2, .level = Level::always, .keywords = kKeywordModules}),
            Field<Ptr>{"bias"}, Field<Str>{"path"});

// Describes every loaded module not described yet, and the unloads of
// described ones that are gone. Called at attach and, after a dlopen or
// dlclose, from the next hook (see note_modules_changed). Not reentrant:
// callers hold the reentry guard.
void scan_modules();

// Marks the module list as possibly changed; the next hook rescans.
void note_modules_changed();
// Rescans if marked; one relaxed load otherwise.
void rescan_modules_if_changed();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_MODULES_H
