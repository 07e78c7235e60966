// What `spoor record --kernel=...` asks for, parsed. Pure: no kernel.
//
//   --kernel=samples,switches,faults,syscalls:read,write,sched,block
//
// After "syscalls:NAME" the words that name no source are more syscalls
// ("syscalls:read,write" is read and write); "syscalls" alone is every
// syscall (the raw_syscalls tracepoints).
#ifndef SPOOR_KERNELSRC_KERNEL_SPEC_H
#define SPOOR_KERNELSRC_KERNEL_SPEC_H

#include <optional>
#include <string>
#include <vector>

namespace spoor::kernelsrc {

struct KernelRequest {
  bool samples = false;        // CPU samples with registers and a stack copy
  bool switches = false;       // PERF_RECORD_SWITCH of the program's threads
  bool faults = false;         // page faults, minor and major
  bool all_syscalls = false;   // raw_syscalls:sys_enter/sys_exit
  std::vector<std::string> syscalls;  // syscalls:sys_enter_X/sys_exit_X
  bool sched = false;          // sched:sched_switch and sched_waking, machine-wide (privileged)
  bool block = false;          // block:block_rq_issue/complete, machine-wide (privileged)
  bool all = false;            // --kernel-all: every source this machine allows

  bool any() const {
    return samples || switches || faults || all_syscalls || !syscalls.empty() || sched || block || all;
  }
};

// Parses a --kernel list into *request (adding to what it holds). Returns
// false with *error naming the word it does not know.
bool parse_kernel_spec(const std::string& text, KernelRequest* request, std::string* error);

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KERNEL_SPEC_H
