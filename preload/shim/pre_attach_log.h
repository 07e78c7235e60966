// Allocations made before the shim attached. Libraries are initialised
// before the shim (the preload is loaded first, so initialised last, just
// before the program's own constructors), and their constructors, and
// ld.so for them, allocate while Spoor.Heap is still off. The hooks log
// those calls here, in static storage (no heap); attach writes each as an
// Alloc event (stack 0: there is no unwinder yet), followed by a Free when
// the block was freed again before attach, so the calls are counted and
// the blocks' later frees and reallocs have their allocation in the trace.
// Their timestamps are attach's. A realloc before attach is logged as the
// free of the old block and an allocation of the new one. Blocks allocated
// by libraries that only the shim needs (shim_libraries.h: libstdc++'s
// exception pool in a C program) are the shim's and are left out; each
// entry keeps its caller's address for that: the hook's return address,
// read in the hook itself. (An unwind per logged call, through libunwind,
// made ~50 rt_sigprocmask system calls for each: 154 of an ls's 446.)
#ifndef SPOOR_PRELOAD_PRE_ATTACH_LOG_H
#define SPOOR_PRELOAD_PRE_ATTACH_LOG_H

#include <atomic>
#include <cstdint>

#include "spoor/config.h"

namespace spoor::preload {

// True until attach has replayed the log, or found it is not being
// recorded (then nothing is logged any more).
extern constinit std::atomic<bool> g_before_attach;

// 1 MiB of .bss, touched only as used: LLVM's libraries alone make over
// 4,000 allocations in their constructors (clang-format, clangd).
inline constexpr uint32_t kPreAttachCapacity = 32768;

// The hooks' slow path, taken only while Spoor.Heap is off and
// g_before_attach is set. An allocation past the capacity is counted
// (pre_attach_dropped), not logged, and replay counts it as a lost event,
// with its cause (count_pre_attach_calls_lost).
void log_pre_attach_alloc(void* p, uint64_t size, const void* caller);
void log_pre_attach_free(void* p);

// Called by attach once the ring is installed and the providers enabled:
// writes an Alloc for each logged block still live, ends the logging.
void replay_pre_attach_log();

// Not recorded: stop logging.
void end_pre_attach_log();

// Allocations past the log's capacity (not in the trace).
uint64_t pre_attach_dropped();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_PRE_ATTACH_LOG_H
