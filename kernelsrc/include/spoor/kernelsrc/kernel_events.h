// Spoor.Kernel: the events the recorder writes for what perf_event_open
// reports (docs in kernelsrc/README.md). Ids, names and field order are the
// schema the symbolizer and the report read: change them only together.
//
// The recorder writes these records itself, with the kernel's timestamp
// (kernel_stream.h), never through Event::write, so they are built from
// the Event class directly and work in a SPOOR_COMPILE_OUT build too.
#ifndef SPOOR_KERNELSRC_KERNEL_EVENTS_H
#define SPOOR_KERNELSRC_KERNEL_EVENTS_H

#include <cstdint>

#include "spoor/event.h"

namespace spoor::kernelsrc {

extern constinit Provider g_kernel;  // "Spoor.Kernel"

#define SPOOR_KERNEL_EVENT(NAME, INFO, ...)                                       \
  inline constinit uint16_t NAME##_key = 0;                                       \
  inline constexpr ::spoor::EventInfo NAME##_info = INFO;                         \
  inline constexpr ::spoor::Event NAME{                                           \
      ::spoor::EventTag<&g_kernel, static_cast<uint8_t>(Level::info), 0>{}, NAME##_key, \
      NAME##_info, __VA_ARGS__}

using FieldU32 = Field<uint32_t>;
using FieldU64 = Field<uint64_t>;

// regs: one u64 per set bit of regs_mask, ascending; stack: the user stack
// copied from the sampled sp upward; callchain/kernel_callchain: u64 ips
// with the PERF_CONTEXT_* markers removed. stack_2..stack_4: the rest of a
// copy longer than one Blob holds (kStackChunkBytes each, in order; empty
// when it ends before), appended so that readers before them still read
// `stack` (its first kStackChunkBytes); traces before them have none.
SPOOR_KERNEL_EVENT(kCpuSample, (EventInfo{.name = "CpuSample", .id = 1}), FieldU32{"pid"}, FieldU32{"tid"}, FieldU32{"cpu"},
                   FieldU64{"ip"}, FieldU32{"regs_abi"}, FieldU64{"regs_mask"}, Field<Blob>{"regs"}, Field<Blob>{"stack"},
                   Field<Blob>{"callchain"}, Field<Blob>{"kernel_callchain"}, Field<Blob>{"stack_2"},
                   Field<Blob>{"stack_3"}, Field<Blob>{"stack_4"});
// out: 1 switched out, 0 switched in; preempted: switched out while runnable.
SPOOR_KERNEL_EVENT(kContextSwitch, (EventInfo{.name = "ContextSwitch", .id = 2}), FieldU32{"pid"}, FieldU32{"tid"},
                   FieldU32{"cpu"}, Field<bool>{"out"}, Field<bool>{"preempted"});
SPOOR_KERNEL_EVENT(kPageFault, (EventInfo{.name = "PageFault", .id = 3}), FieldU32{"pid"}, FieldU32{"tid"}, FieldU32{"cpu"},
                   FieldU64{"address"}, FieldU64{"ip"}, Field<bool>{"major"}, Field<Blob>{"callchain"});
SPOOR_KERNEL_EVENT(kSyscallEnter, (EventInfo{.name = "SyscallEnter", .id = 4, .opcode = Opcode::start}),
                   FieldU32{"pid"}, FieldU32{"tid"}, FieldU32{"cpu"}, FieldU32{"nr"}, Field<Str>{"name"}, Field<Blob>{"args"});
SPOOR_KERNEL_EVENT(kSyscallExit, (EventInfo{.name = "SyscallExit", .id = 5, .opcode = Opcode::stop}),
                   FieldU32{"pid"}, FieldU32{"tid"}, FieldU32{"cpu"}, FieldU32{"nr"}, Field<Str>{"name"}, Field<int64_t>{"ret"});
SPOOR_KERNEL_EVENT(kMmap, (EventInfo{.name = "Mmap", .id = 6}), FieldU32{"pid"}, FieldU32{"tid"}, FieldU64{"start"},
                   FieldU64{"length"}, FieldU64{"pgoff"}, FieldU32{"prot"}, FieldU32{"flags"}, Field<Str>{"path"},
                   Field<Blob>{"build_id"});
SPOOR_KERNEL_EVENT(kComm, (EventInfo{.name = "Comm", .id = 7}), FieldU32{"pid"}, FieldU32{"tid"}, Field<Str>{"comm"},
                   Field<bool>{"exec"});
SPOOR_KERNEL_EVENT(kFork, (EventInfo{.name = "Fork", .id = 8}), FieldU32{"pid"}, FieldU32{"tid"}, FieldU32{"parent_pid"},
                   FieldU32{"parent_tid"});
SPOOR_KERNEL_EVENT(kExit, (EventInfo{.name = "Exit", .id = 9}), FieldU32{"pid"}, FieldU32{"tid"});
// source: which perf event lost records ("samples", "switches", ...).
SPOOR_KERNEL_EVENT(kLost, (EventInfo{.name = "Lost", .id = 10}), FieldU32{"cpu"}, Field<Str>{"source"},
                   FieldU64{"count"});
SPOOR_KERNEL_EVENT(kSchedSwitch, (EventInfo{.name = "SchedSwitch", .id = 11}), FieldU32{"cpu"}, FieldU32{"prev_pid"},
                   Field<Str>{"prev_comm"}, FieldU64{"prev_state"}, FieldU32{"next_pid"}, Field<Str>{"next_comm"});
// irq: an interrupt did the waking (waker_pid is then the task it hit);
// absent from traces before it was added.
SPOOR_KERNEL_EVENT(kSchedWaking, (EventInfo{.name = "SchedWaking", .id = 12}), FieldU32{"cpu"}, FieldU32{"waker_pid"},
                   FieldU32{"pid"}, Field<Str>{"comm"}, FieldU32{"target_cpu"}, Field<bool>{"irq"});
SPOOR_KERNEL_EVENT(kBlockRequest, (EventInfo{.name = "BlockRequest", .id = 13}), FieldU32{"cpu"}, FieldU32{"pid"},
                   FieldU32{"dev"}, FieldU64{"sector"}, FieldU32{"bytes"}, Field<Str>{"rwbs"}, Field<bool>{"issue"});
// What the recording asked the kernel for, once, at its start: the CPU
// sampler's rate (samples per second of a thread's time on the CPU, 0 when
// samples are off) and counter ("cpu-clock" or "cycles"), and the sources
// opened ("samples,switches,sched"). Traces before it have none: their
// readers assume nothing about the rate.
SPOOR_KERNEL_EVENT(kSession, (EventInfo{.name = "Session", .id = 14}), FieldU32{"sample_hz"},
                   Field<Str>{"sample_event"}, Field<Str>{"sources"});
// A block device's name ("sda") for the dev BlockRequest gives (major << 20
// | minor), from sysfs at the start of a recording with the block source,
// one per device the machine has then. Traces before it have none: their
// readers show devices as major:minor.
SPOOR_KERNEL_EVENT(kBlockDevice, (EventInfo{.name = "BlockDevice", .id = 15}), FieldU32{"dev"}, Field<Str>{"name"});
// A kernel function the recording saw (kernel_symbols.h): its start
// address, name and module ("" for the kernel image), from /proc/kallsyms
// at the recording's end, once per function that holds a kernel frame of a
// CpuSample's kernel_callchain or a PageFault's ip. Traces before it, and
// machines whose kallsyms hides addresses, have none: their readers show
// kernel addresses as they are.
SPOOR_KERNEL_EVENT(kKernelSymbol, (EventInfo{.name = "KernelSymbol", .id = 16}), FieldU64{"address"},
                   Field<Str>{"name"}, Field<Str>{"module"});
// The vDSO, as the recorder's own process has it mapped (every process of
// the machine's ABI maps the same image), once beside Session when CPU
// samples are recorded: a reader unwinds and names samples in it
// (clock_gettime) from it, as from a module's file. Traces before it, and
// machines whose vDSO exceeds one Blob, have none: their readers show
// such samples as addresses.
SPOOR_KERNEL_EVENT(kVdsoImage, (EventInfo{.name = "VdsoImage", .id = 17}), Field<Blob>{"image"});

#undef SPOOR_KERNEL_EVENT

// Registers Spoor.Kernel and its events in this process's registry, so
// the next TraceWriter::new_metadata describes them. Call once, before the
// recorder describes its own process.
void register_kernel_events();

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_KERNEL_EVENTS_H
