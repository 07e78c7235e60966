// Stacks of the traced program, captured in the allocator hooks and
// deduplicated: each distinct stack is written once as a Stack event (its
// ID and return addresses); other events carry only the 32-bit ID.
#ifndef SPOOR_PRELOAD_STACK_TABLE_H
#define SPOOR_PRELOAD_STACK_TABLE_H

#include <cstdint>

#include "spoor/event.h"

namespace spoor::preload {

SPOOR_DECLARE_PROVIDER(g_stacks);

// frames: the return addresses, innermost first, as 64-bit little-endian
// words (a blob of 8 * depth bytes).
SPOOR_EVENT(kStack, g_stacks, (EventInfo{.name = "Stack", .id = 1, .level = Level::always}),
            Field<uint32_t>{"id"}, Field<Blob>{"frames"});

// Sets up the table (maps its memory) and the unwinder: the fast one
// (fast_unwind.h) unless the environment has SPOOR_UNWIND=libunwind.
// depth: frames kept per stack, 1..128. Returns false when the memory
// cannot be mapped (stacks are then not captured: IDs are 0).
// `libdw_loaded` runs when the unwinder loads libdw (libdw_loader.h).
bool init_stack_table(int depth, void (*libdw_loaded)() = nullptr);

// In a fork child: forget the parent's stacks (they are in the parent's
// streams), so each is written again in the child's.
void reset_stack_table_after_fork();

// The ID of the calling thread's stack, without the shim's own frames
// (`skip` of them). Cost: one fast_backtrace (~2 ns per frame once its
// rules are cached; fast_unwind.h), then a hash of the frames (~1 ns per
// frame) and a table probe, both skipped when the frames repeat a recent
// capture of the thread's; a new stack also writes its Stack event. 0
// when stacks are off.
uint32_t current_stack_id(int skip);

// The ID of a stack captured elsewhere (frames[0] innermost; cut to the
// table's depth). Lock-free and async-signal-safe: the CPU sampler calls it
// from its signal handler. 0 when stacks are off or n is 0.
uint32_t stack_id_of(void* const* frames, int n);

// Frames a captured stack keeps (the depth given to init_stack_table).
int stack_depth();

// The fast unwinder takes the captures: each new thread must then have its
// stack's bounds looked up before its code runs (prime_thread_stack, in
// the thread trampoline), or all of its captures fall back to libunwind.
bool fast_unwinder_in_use();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_STACK_TABLE_H
