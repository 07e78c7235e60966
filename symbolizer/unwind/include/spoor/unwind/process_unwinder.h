// spoor::unwind: a CPU sample's user stack unwound offline into program
// counters, from what the sample carries (Spoor.Kernel CpuSample): the user
// registers at the sample, a copy of the stack from the sampled sp upward,
// and the kernel's frame-pointer callchain.
//
// With registers and stack bytes, libdw's DWARF unwinder (.eh_frame /
// .debug_frame) walks the copied stack, reading memory from the copy and,
// outside it, from the modules' files: what `perf --call-graph dwarf` does,
// so code built without frame pointers unwinds fully. Without them, the
// kernel's frame-pointer callchain is used as it is.
//
// Not thread-safe (libdw is not, across one Dwfl): one ProcessUnwinder per
// thread.
#ifndef SPOOR_UNWIND_PROCESS_UNWINDER_H
#define SPOOR_UNWIND_PROCESS_UNWINDER_H

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "spoor/symbolizer/symbolizer.h"
#include "spoor/unwind/perf_regs.h"

namespace spoor::unwind {

// One sample as recorded; the spans must stay valid during unwind().
struct UserSample {
  uint64_t ip = 0;                      // the sampled user pc
  uint32_t regs_abi = kRegsAbiNone;     // PERF_SAMPLE_REGS_ABI_*
  PerfRegisters regs;                   // PERF_SAMPLE_REGS_USER
  std::span<const uint8_t> stack;       // PERF_SAMPLE_STACK_USER, from regs' sp upward
  std::span<const uint8_t> callchain;   // u64 user ips, innermost first (may be empty)
};

enum class UnwindMethod : uint8_t {
  dwarf,          // libdw's CFI unwinder over the copied stack
  frame_pointer,  // the kernel's callchain
  ip_only,        // nothing to unwind: the sampled pc alone
};

const char* method_name(UnwindMethod m);

struct UnwoundStack {
  // Frame 0 is the sampled pc itself; every other one is a return address
  // (look it up at pc - 1). Empty only for a sample without any pc.
  std::vector<uint64_t> pcs;
  UnwindMethod method = UnwindMethod::ip_only;
  // Why the walk stopped before the outermost frame ("" when it reached
  // it: a frame whose return address the CFI leaves undefined, or the
  // loader's entry code, which has no CFI): "no user registers", "the
  // sample has no copy of the user stack", "the stack copy ... ends before
  // the caller's frame", libdw's message, ...
  std::string stop_reason;
  // It stopped because the caller's frame lies above the end of the stack
  // copy: a bigger copy (spoor record --kernel-stack-size) would go on.
  bool stack_copy_short = false;
  // It stopped because the caller's frame would lie below the sampled sp:
  // the frame register held no frame (a function's first instructions
  // without CFI, or rbp used as a plain register). A frame-pointer chain
  // from the same registers is no better.
  bool frame_below_sp = false;
};

struct UnwindOptions {
  std::vector<std::string> debug_dirs;  // also searched for .debug_frame (as the symbolizer's)
  std::string sysroot;                  // prefix for module paths; "" for none
  size_t max_frames = 256;
};

// The unwinding state of one process image: its modules (added as the trace
// describes them) and one Dwfl, reused across its samples, so each module's
// file is opened and its CFI parsed once per image.
class ProcessUnwinder {
 public:
  explicit ProcessUnwinder(UnwindOptions options = {});
  ProcessUnwinder(ProcessUnwinder&&) noexcept;
  ProcessUnwinder& operator=(ProcessUnwinder&&) noexcept;
  ~ProcessUnwinder();

  // Describes a module mapped in the image; cheap (the file is opened when
  // a pc first lands in it). A module whose file's build ID differs from
  // `module.build_id` is not used (its CFI would lie) and shows in problems().
  // The same file at the same bias over an overlapping range (the kernel's
  // mmap record and the preload's ModuleLoad of one mapping) is one module.
  void add_module(const symbolizer::ModuleInfo& module);
  size_t module_count() const;

  // Executable memory no file backs ("//anon": JIT code, "[vdso]" without a
  // recorded image, ...): nothing to unwind with, but a walk that ends
  // there says so by name instead of "in no known module".
  void add_unbacked(uint64_t start, uint64_t size, std::string name);

  // Cost: per frame, a CFI lookup (binary search of .eh_frame_hdr) and the
  // register rules; about as much as perf's unwinder minus its per-sample
  // Dwfl setup (bench/RESULTS.md, "offline unwinding").
  UnwoundStack unwind(const UserSample& sample);

  // Modules that could not be opened or changed since recording, once each.
  const std::vector<symbolizer::ModuleProblem>& problems() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spoor::unwind

#endif  // SPOOR_UNWIND_PROCESS_UNWINDER_H
