// The heap provider of libspoor-preload.so: one event per allocator call.
// Alloc and Realloc carry the ID of the caller's stack (a Stack event of
// Spoor.Stack, stack_table.h).
#ifndef SPOOR_PRELOAD_HEAP_PROVIDER_H
#define SPOOR_PRELOAD_HEAP_PROVIDER_H

#include <cstdint>

#include "spoor/event.h"

namespace spoor::preload {

inline constexpr uint64_t kKeywordHeap = 0x1;
inline constexpr uint64_t kKeywordMmap = 0x2;  // mmap, munmap, mremap called by the program

SPOOR_DECLARE_PROVIDER(g_heap);

SPOOR_EVENT(kHeapAlloc, g_heap,
            (EventInfo{.name = "Alloc", .id = 1, .level = Level::info, .keywords = kKeywordHeap}),
            Field<Ptr>{"ptr"}, Field<uint64_t>{"size"}, Field<uint32_t>{"stack"});
SPOOR_EVENT(kHeapFree, g_heap,
            (EventInfo{.name = "Free", .id = 2, .level = Level::info, .keywords = kKeywordHeap}),
            Field<Ptr>{"ptr"});
SPOOR_EVENT(kHeapRealloc, g_heap,
            (EventInfo{.name = "Realloc", .id = 3, .level = Level::info, .keywords = kKeywordHeap}),
            Field<Ptr>{"old_ptr"}, Field<Ptr>{"ptr"}, Field<uint64_t>{"size"},
            Field<uint32_t>{"stack"});

// The program's own memory mappings (the allocator's internal ones are not
// interposable and stay out). fd is -1 for anonymous memory.
SPOOR_EVENT(kHeapMmap, g_heap,
            (EventInfo{.name = "Mmap", .id = 4, .level = Level::info, .keywords = kKeywordMmap}),
            Field<Ptr>{"ptr"}, Field<uint64_t>{"size"}, Field<int32_t>{"prot"}, Field<int32_t>{"flags"},
            Field<int32_t>{"fd"}, Field<uint32_t>{"stack"});
SPOOR_EVENT(kHeapMunmap, g_heap,
            (EventInfo{.name = "Munmap", .id = 5, .level = Level::info, .keywords = kKeywordMmap}),
            Field<Ptr>{"ptr"}, Field<uint64_t>{"size"});
SPOOR_EVENT(kHeapMremap, g_heap,
            (EventInfo{.name = "Mremap", .id = 6, .level = Level::info, .keywords = kKeywordMmap}),
            Field<Ptr>{"old_ptr"}, Field<uint64_t>{"old_size"}, Field<Ptr>{"ptr"}, Field<uint64_t>{"size"},
            Field<uint32_t>{"stack"});

// The program's malloc calls do not reach the shim's hooks: it brings its
// own allocator in its executable, which comes before the shim in the
// lookup order (rustc's jemalloc), so no Alloc, Free or Realloc of this
// image will follow; its mmap calls are still seen. `path`: the object
// that defines the malloc it calls. Written once per process image (and
// again in each fork child), after ProcessStart.
SPOOR_EVENT(kHeapOwnAllocator, g_heap,
            (EventInfo{.name = "OwnAllocator", .id = 7, .level = Level::always, .keywords = kKeywordHeap}),
            Field<Str>{"path"});

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_HEAP_PROVIDER_H
