// One x86-64 unwind rule, as the fast unwinder caches it per code address
// (packed into a word), and the slow path that reads it from the module's
// .eh_frame with libdw.
#ifndef SPOOR_PRELOAD_UNWIND_RULE_H
#define SPOOR_PRELOAD_UNWIND_RULE_H

#include <cstddef>
#include <cstdint>

namespace spoor::preload {

// Its bytes are kept from one recording to the next (rule_cache_file.h):
// a change here bumps kUnwindRuleFormat (../shared_rules.h).
struct UnwindRule {
  enum Kind : uint8_t {
    kNone = 0,         // never a rule: "no rule at hand", in caches
    kFromRsp = 1,      // CFA = rsp + cfa_offset; saved slots as below
    kFromRbp = 2,      // CFA = rbp + cfa_offset; saved slots as below
    kOutermost = 3,    // the return address is undefined: the stack ends here
    kUnsupported = 4,  // anything else: the capture goes to libunwind
    kGoSystemStack = 5,  // Go's asmcgocall after its call of C code: the caller is on the goroutine's stack
  };
  Kind kind = kUnsupported;
  // Where the return address and the caller's rbp are saved, in 8-byte
  // words from the CFA (always below it: -1 is CFA-8). rbp_word 0: rbp is
  // not saved in this frame (the caller's is the same). lowest_word: the
  // lower of the two.
  int8_t ra_word = 0;
  int8_t rbp_word = 0;
  int8_t lowest_word = 0;
  // For kFromRsp, describe_unwind_rule guarantees cfa_offset > 0 and
  // cfa_offset + 8 * lowest_word >= 0: the CFA lies above rsp and the
  // saved slots at or above it, so the walk checks only the stack's top.
  int32_t cfa_offset = 0;
};
static_assert(sizeof(UnwindRule) == 8);

// The rule at `address` (a code address of this process: a return address
// minus 1, or the exact PC of the capturing frame). From the recording's
// shared store when another process (or this one) built it already; else
// opens the containing module's file with libelf on first use, keeps it
// open until the generation changes (a module was unloaded: `generation`
// is the caller's current one), and publishes the rule it builds.
// Allocates; not thread-safe: the caller serialises calls.
// Returns kNone (all bits 0, "no rule at hand": not to be cached) when
// the rule needs libdw and it is not loaded yet; it is asked for then
// (libdw_loader.h).
// Returns kUnsupported for modules whose file cannot be opened or differs
// from what is loaded (build ID), and frames without CFI or with rules
// other than the standard ones. An address outside every module (a JIT's
// code) gets libunwind's guess for it: rbp is the frame pointer
// (kFromRbp, CFA = rbp + 16). The return address of Go's asmcgocall,
// where a cgo call left the goroutine's stack for the system stack, gets
// kGoSystemStack (fast_unwind.cpp takes the walk back to the goroutine).
UnwindRule describe_unwind_rule(uintptr_t address, uint64_t generation);
// How many of this thread's describe_unwind_rule calls the shared store
// answered (the rest read the module's tables).
uint64_t rules_from_store_here();

// The rule the recording's shared store holds for `address`, for a
// capture that may not build one (a CPU sample's walk in its signal
// handler, a hook inside the allocator): looks only at the modules this
// process identified in `generation` (the epoch's generation bits), takes
// no lock, allocates nothing, is async-signal-safe. 0 when it has none.
// Cost: a scan of the identified modules' spans and a probe of the store.
uint64_t rule_from_store_alone(uintptr_t address, uint64_t generation);

// Copies `size` bytes at `address` of this process into `out` with
// process_vm_readv, which fails rather than faults where they are not
// readable. Keeps errno (it runs inside hooks); two system calls, no
// allocation: callable in a signal handler.
bool read_own_memory(void* out, uintptr_t address, size_t size);

// libunwind's guess for code without unwind tables: rbp is the frame
// pointer (kFromRbp, CFA = rbp + 16).
UnwindRule frame_chain_guess();
// Whether `address` (a return address - 1) is Go's asmcgocall after its
// call of C code, and the rule for it. Two system calls, no allocation:
// callable in a signal handler.
bool is_go_asmcgocall_return(uintptr_t address);
UnwindRule go_system_stack_rule();

// True when modules were unloaded since the last call (the loader's count
// of removals moved), or loaded while a guess for code outside every
// module is cached (a module may now be where that code was): cached
// rules may describe code that is gone. Same serialisation as
// describe_unwind_rule.
bool modules_changed_since_last_check();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_UNWIND_RULE_H
