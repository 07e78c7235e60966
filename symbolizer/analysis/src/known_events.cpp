#include "spoor/analysis/known_events.h"

#include <initializer_list>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <variant>

namespace spoor::analysis {
namespace {

struct KindSpec {
  std::string_view provider;
  std::string_view event;
  EventKind kind;
  std::initializer_list<std::string_view> fields;  // slot order
};

// Every Spoor.IO kind shares one slot layout (field::kIo*).
#define SPOOR_IO_FIELDS \
  {"fd",    "path", "result", "start_ticks", "requested", "stack",       "target", "stream", \
   "old_stream", "flags", "last", "call",   "address",     "socket_type", "dirfd",  "cwd", "calls", "end_ticks", "protocol", \
   "busy_ticks", "aiocb", "ring", "user_data", "first", "fds"}

const KindSpec kSpecs[] = {
    {"Spoor.Process", "ModuleLoad", EventKind::module_load, {"bias", "start", "size", "path", "build_id"}},
    {"Spoor.Process", "ModuleUnload", EventKind::module_unload, {"bias", "path"}},
    {"Spoor.Process", "ProcessStart", EventKind::process_start, {"ppid", "exec_count", "exe", "cwd"}},
    {"Spoor.Process", "Fork", EventKind::process_fork, {"child_pid", "spawn"}},
    {"Spoor.Process", "Exec", EventKind::process_exec, {"path", "untraceable", "cpu_ns"}},
    {"Spoor.Process", "ExecFailed", EventKind::process_exec_failed, {"errno"}},
    {"Spoor.Process", "ProcessExit", EventKind::process_exit, {"pid", "exit_code", "signal", "core_dumped"}},
    {"Spoor.Process", "ModuleImage", EventKind::module_image, {"bias", "path", "offset", "image"}},
    {"Spoor.Process", "CommandStart", EventKind::command_start, {"call", "command"}},
    {"Spoor.Process", "CommandEnd", EventKind::command_end, {"call", "exit_code", "signal", "core_dumped"}},
    {"Spoor.Process", "ProcessRunning", EventKind::process_running, {"pid"}},
    {"Spoor.Process", "ShimStarted", EventKind::shim_started, {"duration_ns"}},
    {"Spoor.Thread", "ThreadStart", EventKind::thread_start, {"tid", "parent_tid", "start", "stack", "cpu_ns"}},
    {"Spoor.Thread", "ThreadEnd", EventKind::thread_end, {"tid", "with_process", "cpu_ns"}},
    {"Spoor.Thread", "ThreadName", EventKind::thread_name, {"tid", "name"}},
    {"Spoor.Stack", "Stack", EventKind::stack, {"id", "frames"}},
    {"Spoor.Heap", "Alloc", EventKind::heap_alloc, {"ptr", "size", "stack"}},
    {"Spoor.Heap", "Free", EventKind::heap_free, {"ptr"}},
    {"Spoor.Heap", "Realloc", EventKind::heap_realloc, {"old_ptr", "ptr", "size", "stack"}},
    {"Spoor.Heap", "Mmap", EventKind::heap_mmap, {"ptr", "size", "prot", "flags", "fd", "stack"}},
    {"Spoor.Heap", "Munmap", EventKind::heap_munmap, {"ptr", "size"}},
    {"Spoor.Heap", "Mremap", EventKind::heap_mremap, {"old_ptr", "old_size", "ptr", "size", "stack"}},
    {"Spoor.Heap", "OwnAllocator", EventKind::heap_own_allocator, {"path"}},
    {"Spoor.IO", "Open", EventKind::io_open, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Close", EventKind::io_close, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Read", EventKind::io_read, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Write", EventKind::io_write, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Seek", EventKind::io_seek, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Sync", EventKind::io_sync, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Dup", EventKind::io_dup, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FOpen", EventKind::io_fopen, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FDOpen", EventKind::io_fdopen, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FReopen", EventKind::io_freopen, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FClose", EventKind::io_fclose, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FRead", EventKind::io_fread, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FWrite", EventKind::io_fwrite, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FFlush", EventKind::io_fflush, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FdInherited", EventKind::io_fd_inherited, SPOOR_IO_FIELDS},
    {"Spoor.IO", "CloseRange", EventKind::io_close_range, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Copy", EventKind::io_copy, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FPutcRun", EventKind::io_fputc_run, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FGetcRun", EventKind::io_fgetc_run, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FdCreated", EventKind::io_fd_created, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Connect", EventKind::io_connect, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Bind", EventKind::io_bind, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Accept", EventKind::io_accept, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Send", EventKind::io_send, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Receive", EventKind::io_receive, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Listen", EventKind::io_listen, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Socket", EventKind::io_socket, SPOOR_IO_FIELDS},
    {"Spoor.IO", "Chdir", EventKind::io_chdir, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FWriteRun", EventKind::io_fwrite_run, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FReadRun", EventKind::io_fread_run, SPOOR_IO_FIELDS},
    {"Spoor.IO", "FMemOpen", EventKind::io_fmemopen, SPOOR_IO_FIELDS},
    {"Spoor.IO", "AioSubmit", EventKind::io_aio_submit, SPOOR_IO_FIELDS},
    {"Spoor.IO", "AioReturn", EventKind::io_aio_return, SPOOR_IO_FIELDS},
    {"Spoor.IO", "UringSubmit", EventKind::io_uring_submit, SPOOR_IO_FIELDS},
    {"Spoor.IO", "UringComplete", EventKind::io_uring_complete, SPOOR_IO_FIELDS},
    {"Spoor.IO", "UringUnseen", EventKind::io_uring_unseen, SPOOR_IO_FIELDS},
    {"Spoor.IO", "UringFiles", EventKind::io_uring_files, SPOOR_IO_FIELDS},
    {"Spoor.Samples", "Sample", EventKind::sample, {"stack", "periods"}},
    {"Spoor.Samples", "SamplerStart", EventKind::sampler_start, {"hz"}},
    {"Spoor.Samples", "SamplerOff", EventKind::sampler_off, {"tracer", "tracer_name"}},
    {"Spoor.Kernel", "CpuSample", EventKind::kernel_sample,
     {"pid", "tid", "cpu", "ip", "regs_abi", "regs_mask", "regs", "stack", "callchain", "kernel_callchain", "stack_2",
      "stack_3", "stack_4"}},
    {"Spoor.Kernel", "ContextSwitch", EventKind::kernel_switch, {"pid", "tid", "cpu", "out", "preempted"}},
    {"Spoor.Kernel", "PageFault", EventKind::kernel_fault, {"pid", "tid", "cpu", "address", "ip", "major", "callchain"}},
    {"Spoor.Kernel", "SyscallEnter", EventKind::kernel_syscall_enter, {"pid", "tid", "cpu", "nr", "name", "args"}},
    {"Spoor.Kernel", "SyscallExit", EventKind::kernel_syscall_exit, {"pid", "tid", "cpu", "nr", "name", "ret"}},
    {"Spoor.Kernel", "Mmap", EventKind::kernel_mmap,
     {"pid", "tid", "start", "length", "pgoff", "prot", "flags", "path", "build_id"}},
    {"Spoor.Kernel", "Comm", EventKind::kernel_comm, {"pid", "tid", "comm", "exec"}},
    {"Spoor.Kernel", "Fork", EventKind::kernel_fork, {"pid", "tid", "parent_pid", "parent_tid"}},
    {"Spoor.Kernel", "Exit", EventKind::kernel_exit, {"pid", "tid"}},
    {"Spoor.Kernel", "Lost", EventKind::kernel_lost, {"cpu", "source", "count"}},
    {"Spoor.Kernel", "SchedSwitch", EventKind::kernel_sched_switch,
     {"cpu", "prev_pid", "prev_comm", "prev_state", "next_pid", "next_comm"}},
    {"Spoor.Kernel", "SchedWaking", EventKind::kernel_sched_waking,
     {"cpu", "waker_pid", "pid", "comm", "target_cpu", "irq"}},
    {"Spoor.Kernel", "BlockRequest", EventKind::kernel_block,
     {"cpu", "pid", "dev", "sector", "bytes", "rwbs", "issue"}},
    {"Spoor.Kernel", "Session", EventKind::kernel_session, {"sample_hz", "sample_event", "sources"}},
    {"Spoor.Kernel", "BlockDevice", EventKind::kernel_block_device, {"dev", "name"}},
    {"Spoor.Kernel", "KernelSymbol", EventKind::kernel_symbol, {"address", "name", "module"}},
    {"Spoor.Kernel", "VdsoImage", EventKind::kernel_vdso_image, {"image"}},
};

#undef SPOOR_IO_FIELDS

const reader::Value* value_at(const reader::Event& e, const KnownEvent& k, int slot) {
  const uint8_t i = k.slot[static_cast<size_t>(slot)];
  return i < e.fields.size() ? &e.fields[i].value : nullptr;
}

}  // namespace

KnownEvent recognize(const reader::EventDescriptor& d) {
  KnownEvent k;
  k.slot.fill(kMissingField);
  const std::string_view provider = d.provider != nullptr ? std::string_view(d.provider->name) : "";
  for (const KindSpec& s : kSpecs) k.builtin_provider = k.builtin_provider || s.provider == provider;
  if (!k.builtin_provider) return k;
  for (const KindSpec& s : kSpecs) {
    if (s.provider != provider || s.event != d.name) continue;
    k.kind = s.kind;
    size_t slot = 0;
    for (std::string_view name : s.fields) {
      for (size_t i = 0; i < d.fields.size() && i < kMissingField; ++i)
        if (d.fields[i].name == name) k.slot[slot] = static_cast<uint8_t>(i);
      ++slot;
    }
    // The machine-wide events (sched, block) and Lost/Session are about no
    // one thread of the program: they stay the recorder's.
    k.names_thread = provider == "Spoor.Kernel" && has_field(k, field::kKernelPid) && has_field(k, field::kKernelTid) &&
                     k.kind >= EventKind::kernel_sample && k.kind <= EventKind::kernel_exit;
    break;
  }
  return k;
}

KnownEvents::KnownEvents(const reader::Trace& trace) {
  other_.slot.fill(kMissingField);
  by_descriptor_.reserve(trace.events().size());
  for (const reader::EventDescriptor& d : trace.events()) by_descriptor_.emplace(&d, recognize(d));
}

namespace field {
std::string_view stdio_run_function(uint64_t call) {
  constexpr std::string_view kNames[] = {"fwrite", "fputs", "puts", "printf", "fread", "fgets", "getline", "__uflow"};
  return call < std::size(kNames) ? kNames[call] : "stdio";
}
}  // namespace field

bool has_field(const KnownEvent& k, int slot) { return k.slot[static_cast<size_t>(slot)] != kMissingField; }

uint64_t field_u64(const reader::Event& e, const KnownEvent& k, int slot) {
  const reader::Value* v = value_at(e, k, slot);
  if (v == nullptr) return 0;
  return std::visit(
      [](const auto& x) -> uint64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, uint64_t>) return x;
        else if constexpr (std::is_same_v<T, int64_t>) return static_cast<uint64_t>(x);
        else if constexpr (std::is_same_v<T, bool>) return x ? 1 : 0;
        else if constexpr (std::is_same_v<T, reader::Pointer>) return x.address;
        else return 0;
      },
      *v);
}

int64_t field_i64(const reader::Event& e, const KnownEvent& k, int slot, int64_t missing) {
  const reader::Value* v = value_at(e, k, slot);
  if (v == nullptr) return missing;
  return static_cast<int64_t>(field_u64(e, k, slot));
}

std::string_view field_str(const reader::Event& e, const KnownEvent& k, int slot) {
  const reader::Value* v = value_at(e, k, slot);
  if (v == nullptr) return {};
  const auto* s = std::get_if<std::string_view>(v);
  return s != nullptr ? *s : std::string_view{};
}

std::span<const uint8_t> field_blob(const reader::Event& e, const KnownEvent& k, int slot) {
  const reader::Value* v = value_at(e, k, slot);
  if (v == nullptr) return {};
  const auto* b = std::get_if<reader::Blob>(v);
  return b != nullptr ? b->bytes : std::span<const uint8_t>{};
}

}  // namespace spoor::analysis
