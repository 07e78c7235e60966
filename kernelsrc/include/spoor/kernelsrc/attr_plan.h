// From what the user asked (kernel_spec.h) and what this process may do,
// the perf_event_attr of every event to open, and what cannot be had and
// why. A pure function: the privilege and the tracepoint IDs come in as
// arguments, so the mapping is tested without a kernel (attr_plan_test).
#ifndef SPOOR_KERNELSRC_ATTR_PLAN_H
#define SPOOR_KERNELSRC_ATTR_PLAN_H

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "spoor/kernelsrc/kernel_spec.h"

namespace spoor::kernelsrc {

// What perf_event_open lets this process do (perf_event_paranoid(2)).
struct Privilege {
  int paranoid = 2;        // /proc/sys/kernel/perf_event_paranoid
  bool perfmon = false;    // root, CAP_PERFMON or CAP_SYS_ADMIN: no paranoid limits

  bool kernel_side() const { return perfmon || paranoid <= 1; }  // exclude_kernel=0, per task
  bool machine_wide() const { return perfmon || paranoid <= 0; } // pid=-1
  bool raw_tracepoints() const { return perfmon || paranoid <= -1; }
};

// What would allow an event that needs perf_event_paranoid <= `needed`.
std::string paranoid_hint(const Privilege& p, int needed);

// A tracepoint's ID, or why there is none (tracefs unreadable, no such event).
struct TracepointId {
  uint64_t id = 0;
  std::string error;  // empty when id is valid
};
using TracepointLookup = std::function<TracepointId(const std::string& group, const std::string& name)>;

// What each opened event's records become (kernel_convert.h).
enum class Role : uint8_t {
  sideband,        // dummy: mmap2, comm, task and (for "switches") context switch records
  cpu_sample,      // cpu-clock or cycles samples with regs and stack
  fault_minor,
  fault_major,
  syscall_enter,   // syscalls:sys_enter_NAME
  syscall_exit,
  raw_syscall_enter,  // raw_syscalls:sys_enter (every syscall)
  raw_syscall_exit,
  sched_switch,
  sched_waking,
  block_issue,
  block_complete,
};

struct PlannedEvent {
  Role role = Role::sideband;
  std::string source;        // what Lost events and messages call it: "samples", "syscalls:read", ...
  perf_event_attr attr{};
  bool machine_wide = false; // pid -1 (every process), else the program's tree (inherit)
  // Opened instead when `attr` fails with one of fallback_errnos (no PMU:
  // ENOENT, EOPNOTSUPP; a kernel without build IDs in mmap records:
  // EINVAL), with the note said then.
  std::optional<perf_event_attr> fallback;
  std::vector<int> fallback_errnos;
  std::string fallback_note;
  std::string tracepoint;    // "group:name" of a tracepoint event (its format is read for RAW)
  std::string syscall;       // the syscall of syscall_enter/exit
};

struct Unavailable {
  std::string source;
  std::string reason;        // what is missing and what would enable it
};

struct AttrPlan {
  std::vector<PlannedEvent> events;  // events[0] is the side-band event
  std::vector<Unavailable> unavailable;
  std::vector<std::string> notes;
  uint32_t ring_data_pages = 0;      // per CPU, a power of two (plus one header page mapped)
  // The fewest a ring may have when locked memory runs short: room for two
  // CPU samples of the planned stack copy (a record larger than the ring is
  // always lost).
  uint32_t ring_min_data_pages = 8;
};

// One Blob of a CpuSample's stack copy: the trace format caps a Blob at
// 16383 bytes (spoor::kMaxValueBytes, a 2-byte length), rounded down to the
// 8 perf copies in. A longer copy goes on in the sample's stack_2..stack_4.
inline constexpr uint32_t kStackChunkBytes = 16376;
inline constexpr uint32_t kStackChunks = 4;  // stack, stack_2, stack_3, stack_4

// The most user stack the kernel copies per sample (perf_event_attr's
// sample_stack_user: below 64 KiB, a multiple of 8). It trims the copy
// further so the whole record fits its 16-bit size (regs and callchain
// take a few hundred bytes), so kStackChunks chunks always hold it.
inline constexpr uint32_t kMaxStackBytes = 65528;
static_assert(kStackChunks * kStackChunkBytes >= kMaxStackBytes - 8 * 8,
              "the chunks hold every copy the kernel gives (a record has at least 8 u64s beside the stack)");

// The default copy. Interpreters recurse through C (Python's eval loop:
// ~0.5 KiB a level), so 8 KiB, perf's default, cut most of a Python
// program's samples short, and 16 KiB still most of a deeper one's; 32 KiB
// unwound all of them, and 64 KiB gained nothing more while taking twice
// the ring (bench/RESULTS.md, "Kernel samples: how much user stack to
// copy" and "Kernel samples: more than 16 KiB of user stack").
// Without privilege the ring is the 512 KiB an unprivileged user may lock,
// where the kernel reserves a whole copy per sample: at 32 KiB, 16 samples,
// and a 10 kHz recording lost twice the records it lost at 16 KiB (4% against
// 2%), so an unprivileged recorder takes 16 KiB unless told otherwise.
inline constexpr uint32_t kDefaultStackBytes = 32768;
inline constexpr uint32_t kDefaultUnprivilegedStackBytes = 16376;
// stack_bytes' value for "as the privilege allows": one of the two above.
inline constexpr uint32_t kStackBytesByPrivilege = 0xFFFFFFFF;

struct PlanOptions {
  KernelRequest request;
  int sample_hz = 1000;           // 1..100000
  uint32_t stack_bytes = kStackBytesByPrivilege;  // user stack copied per sample, multiple of 8; 0: none
  Privilege privilege;
  // The processes already run (spoor record --pid): the events are on from
  // the moment they are opened, not from an exec.
  bool attach = false;
  // Where /proc/kallsyms is kept from one recording to the next
  // (kallsyms_cache.h); "" for no copy.
  std::string kallsyms_cache;

  // The copy asked for: stack_bytes, or the default for the privilege.
  uint32_t stack_copy_bytes() const {
    if (stack_bytes != kStackBytesByPrivilege) return stack_bytes & ~7u;
    return privilege.perfmon ? kDefaultStackBytes : kDefaultUnprivilegedStackBytes;
  }
};

// x86-64 user registers for DWARF unwinding (perf_regs.h numbering):
// AX BX CX DX SI DI BP SP IP and R8-R15.
inline constexpr uint64_t kX86DwarfRegsMask = 0x1FFull | (0xFFull << 16);
// The registers to ask for on this build's architecture (0 where unknown).
uint64_t dwarf_regs_mask();

// Plans the events. Never fails: what cannot be opened is in `unavailable`.
AttrPlan plan_attrs(const PlanOptions& options, const TracepointLookup& lookup);

// The sample_type every planned event's records carry a sample_id trailer
// of (sample_id_all): TID, TIME, CPU and IDENTIFIER.
inline constexpr uint64_t kSampleIdBits =
    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_ATTR_PLAN_H
