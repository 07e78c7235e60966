// What every allocator hook (heap_hooks.cpp: the C functions, new_hooks.cpp:
// operator new/delete, map_hooks.cpp: mmap) calls to record a call. Callers
// hold the reentry guard and call these directly from the hook: the stack
// capture skips exactly this function's and the hook's frames.
#ifndef SPOOR_PRELOAD_HEAP_RECORD_H
#define SPOOR_PRELOAD_HEAP_RECORD_H

#include <cstdint>

namespace spoor::preload {

// `caller`: the hook's return address (__builtin_return_address(0)), the
// first frame outside the shim, which the pre-attach log keeps.
void record_alloc(void* p, uint64_t size, const void* caller);
void record_realloc(void* old, void* p, uint64_t size, const void* caller);
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

// Which malloc the program's calls reach, and which the shim's calls do.
// rule_cache.h says why it matters; kHeapOwnAllocator why users care.
struct ProgramAllocator {
  bool hooked = false;     // the program's malloc calls reach the shim's hook
  bool glibc_next = false; // the hook's calls reach the C library's malloc
  char owner[256] = {};    // when not hooked: the object that defines the program's malloc
  bool is_glibc() const { return hooked && glibc_next; }
};
ProgramAllocator examine_program_allocator();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_HEAP_RECORD_H
