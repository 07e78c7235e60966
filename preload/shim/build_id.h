// GNU build IDs of loaded modules, read from their PT_NOTE segments in
// memory: what ModuleLoad events carry, and how the unwinder checks that
// the file it opens for a module's unwind tables is the one loaded.
#ifndef SPOOR_PRELOAD_BUILD_ID_H
#define SPOOR_PRELOAD_BUILD_ID_H

#include <link.h>

#include <cstdint>

namespace spoor::preload {

// The build ID of the module `info` describes: its size in bytes, with *out
// pointing at it inside the module's image; 0 (and null) when it has none.
uint32_t build_id_in_memory(const dl_phdr_info* info, const uint8_t** out);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_BUILD_ID_H
