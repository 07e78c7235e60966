// What every allocator hook (heap_hooks.cpp: the C functions, new_hooks.cpp:
// operator new/delete, map_hooks.cpp: mmap) calls to record a call. Callers
// hold the reentry guard and call these directly from the hook: the stack
// capture skips exactly this function's and the hook's frames.
#ifndef SPOOR_PRELOAD_HEAP_RECORD_H
#define SPOOR_PRELOAD_HEAP_RECORD_H

#include <cstdint>

namespace spoor::preload {

void record_alloc(void* p, uint64_t size);
void record_realloc(void* old, void* p, uint64_t size);
// Before the real free: once freed, another thread may get the same address
// and its Alloc must come after this Free.
void record_free(void* p);

// The same for a call made by a signal handler that interrupted the shim
// (ReentryGuard::in_handler, reentry_guard.h): the ring write only, with a one-frame
// stack, `caller` (the hook's return address), as the unwinder may be
// mid-walk under the handler.
void record_alloc_in_handler(void* p, uint64_t size, void* caller);
void record_realloc_in_handler(void* old, void* p, uint64_t size, void* caller);
void record_free_in_handler(void* p);

// Finds the real free now if no free has yet. Call before a dlsym that may
// fail: the loader frees its error message in the next dlsym, and a free
// hook still resolving then would recurse into that dlsym forever.
void resolve_real_free();

// Whether the program's malloc is the shim's hook over the C library's:
// false when the program defines its own (its executable comes first in
// the lookup order, so the hooks never see its calls) or a malloc library
// is next after the shim. rule_cache.h says why it matters.
bool program_allocator_is_glibc();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_HEAP_RECORD_H
