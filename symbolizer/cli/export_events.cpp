#include "export_events.h"

#include <string>

namespace spoor::cli {
namespace {

using analysis::EventKind;
namespace field = analysis::field;

// Calls only: FdInherited describes a descriptor and Socket the one its
// FdCreated made; neither took time of its own.
bool is_io(EventKind k) {
  return (k >= EventKind::io_open && k <= EventKind::io_chdir) && k != EventKind::io_fd_inherited &&
         k != EventKind::io_socket;
}

}  // namespace

void ExportEvents::allocated(ProcessHeap& h, uint64_t ptr, uint64_t size) {
  if (ptr == 0) return;  // a failed allocation holds nothing
  // An address handed out twice without a free between (a missed Free): the
  // older block is gone.
  freed(h, ptr);
  h.live[ptr] = size;
  h.bytes += static_cast<int64_t>(size);
}

void ExportEvents::freed(ProcessHeap& h, uint64_t ptr) {
  auto it = h.live.find(ptr);
  if (it == h.live.end()) return;  // allocated before tracing began, or free(NULL)
  h.bytes -= static_cast<int64_t>(it->second);
  h.live.erase(it);
}

void ExportEvents::heap_changed(ProcessHeap& h, uint32_t pid, int64_t time_ns) {
  if (h.last_point != SIZE_MAX && time_ns - h.last_point_ns < kHeapSizeStepNs) {
    heap_size[h.last_point].value = h.bytes;  // the interval's last value
    return;
  }
  h.last_point_ns = time_ns;
  h.last_point = heap_size.size();
  heap_size.push_back({.pid = pid, .time_ns = time_ns, .value = h.bytes});
}

void ExportEvents::io_slice(const reader::Event& e, const analysis::KnownEvent& k) {
  exporter::Slice s;
  s.pid = e.pid;
  s.tid = e.tid;
  // A run (FPutcRun, FGetcRun, FWriteRun, FReadRun) is one slice over its
  // span, from its first call's start to its last call's end_ticks.
  s.end_ns = analysis::has_field(k, field::kIoEndTicks)
                 ? trace_.clock().to_ns(analysis::field_u64(e, k, field::kIoEndTicks))
                 : e.time_ns;
  s.begin_ns = analysis::has_field(k, field::kIoStartTicks)
                   ? trace_.clock().to_ns(analysis::field_u64(e, k, field::kIoStartTicks))
                   : e.time_ns;
  if (s.begin_ns > s.end_ns) s.begin_ns = s.end_ns;
  s.name = e.descriptor->name;
  // A run of block or line calls is named by its function and calls:
  // "fwrite x1234"; its busy time is an argument (the span also holds the
  // program's time between the calls).
  if (k.kind == EventKind::io_fwrite_run || k.kind == EventKind::io_fread_run)
    s.name = std::string(field::stdio_run_function(analysis::field_u64(e, k, field::kIoCall))) + " x" +
             std::to_string(analysis::field_u64(e, k, field::kIoCalls));
  s.category = "io";
  if (analysis::has_field(k, field::kIoCalls))
    s.args.emplace_back("calls", std::to_string(analysis::field_u64(e, k, field::kIoCalls)));
  if (analysis::has_field(k, field::kIoBusyTicks) && analysis::has_field(k, field::kIoStartTicks)) {
    const uint64_t start = analysis::field_u64(e, k, field::kIoStartTicks);
    const int64_t busy_ns = trace_.clock().to_ns(start + analysis::field_u64(e, k, field::kIoBusyTicks)) -
                            trace_.clock().to_ns(start);
    s.args.emplace_back("busy_ns", std::to_string(busy_ns));
  }
  if (analysis::has_field(k, field::kIoFd)) s.args.emplace_back("fd", std::to_string(analysis::field_i64(e, k, field::kIoFd)));
  if (analysis::has_field(k, field::kIoTarget))
    s.args.emplace_back("target", std::to_string(analysis::field_i64(e, k, field::kIoTarget)));
  if (analysis::has_field(k, field::kIoPath)) s.args.emplace_back("path", std::string(analysis::field_str(e, k, field::kIoPath)));
  if (analysis::has_field(k, field::kIoRequested))
    s.args.emplace_back("requested", std::to_string(analysis::field_u64(e, k, field::kIoRequested)));
  if (analysis::has_field(k, field::kIoResult))
    s.args.emplace_back("result", std::to_string(analysis::field_i64(e, k, field::kIoResult)));
  io_slices.push_back(std::move(s));
}

void ExportEvents::on_event(const reader::Event& e, const analysis::EventContext& c) {
  const analysis::KnownEvent& k = *c.known;
  if (!k.builtin_provider) {
    activities_.add(e);
    // Events that are neither start nor stop are points in time.
    if (e.descriptor->opcode != 1 && e.descriptor->opcode != 2)
      instants.push_back({.pid = e.pid, .tid = e.tid, .time_ns = e.time_ns, .name = e.descriptor->name,
                          .category = e.provider != nullptr ? e.provider->name : ""});
    return;
  }
  if (is_io(k.kind)) return io_slice(e, k);
  switch (k.kind) {
    case EventKind::heap_alloc: {
      ProcessHeap& h = heaps_[c.image];
      allocated(h, analysis::field_u64(e, k, field::kPtr), analysis::field_u64(e, k, field::kAllocSize));
      heap_changed(h, e.pid, e.time_ns);
      break;
    }
    case EventKind::heap_free: {
      ProcessHeap& h = heaps_[c.image];
      freed(h, analysis::field_u64(e, k, field::kPtr));
      heap_changed(h, e.pid, e.time_ns);
      break;
    }
    case EventKind::heap_realloc: {
      ProcessHeap& h = heaps_[c.image];
      const uint64_t old_ptr = analysis::field_u64(e, k, field::kReallocOld);
      const uint64_t ptr = analysis::field_u64(e, k, field::kReallocPtr);
      const uint64_t size = analysis::field_u64(e, k, field::kReallocSize);
      // A failed realloc (NULL for a nonzero size) leaves the old block alone.
      if (ptr == 0 && size != 0) break;
      freed(h, old_ptr);
      allocated(h, ptr, size);
      heap_changed(h, e.pid, e.time_ns);
      break;
    }
    case EventKind::sample:
      samples.push_back({.pid = e.pid,
                         .tid = e.tid,
                         .time_ns = e.time_ns,
                         .stack = c.stack(static_cast<uint32_t>(analysis::field_u64(e, k, field::kSampleStack))),
                         .periods = std::max<uint32_t>(1, static_cast<uint32_t>(analysis::field_u64(e, k, field::kPeriods)))});
      break;
    case EventKind::kernel_sample: {
      // The recorder wrote it: the thread is the one its fields name.
      const analysis::ThreadInfo& t = c.model->threads[c.thread];
      kernel_samples.push_back({.pid = t.pid, .tid = t.tid, .time_ns = e.time_ns, .stack = c.unwound, .periods = 1});
      break;
    }
    case EventKind::process_fork:
      instants.push_back({.pid = e.pid, .tid = e.tid, .time_ns = e.time_ns,
                          .name = "fork " + std::to_string(analysis::field_u64(e, k, field::kChildPid)),
                          .category = "process"});
      break;
    case EventKind::process_exec:
      instants.push_back({.pid = e.pid, .tid = e.tid, .time_ns = e.time_ns,
                          .name = "exec " + std::string(analysis::field_str(e, k, field::kExecPath)),
                          .category = "process"});
      break;
    default:
      break;
  }
}

}  // namespace spoor::cli
