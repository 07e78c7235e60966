// The one pass: EventReader's events in time order, each first taken into
// the model (processes, images, modules, threads, stacks) and then handed
// to the visitors.
#include "spoor/analysis/load.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include "kernel_modules.h"
#include "module_paths.h"
#include "spoor/format.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/stream_stats.h"

namespace spoor::analysis {
namespace {

namespace f = field;

uint64_t thread_map_key(uint32_t pid, uint32_t tid) { return (static_cast<uint64_t>(pid) << 32) | tid; }

bool is_recorder_command(const reader::Process& p) {
  return p.arguments.size() == 2 && p.arguments[0] == "spoor" && p.arguments[1] == "record";
}

class Loader {
 public:
  Loader(const reader::Trace& trace, const LoadOptions& options)
      : trace_(trace), only_pids_(options.only_pids), known_(trace), paths_(options.sysroot), kernel_(m_, options, paths_) {
    for (const reader::Process& p : trace.processes()) {
      const ProcessIndex i = process_of(p.pid);
      ProcessInfo& info = m_.processes[i];
      // A traced exec adds a PROCESS block for the same pid: the last one
      // names what the process ended up running.
      info.ppid = p.ppid;
      info.name = p.name;
      info.command_line = p.arguments;
      info.recorder = is_recorder_command(p);
    }
  }

  TraceModel run(std::span<EventVisitor* const> visitors) {
    if (trace_.has_clock() && trace_.clock().realtime_ns_ref != 0) {
      m_.has_realtime = true;
      m_.realtime_minus_monotonic_ns = trace_.clock().realtime_ns_ref - trace_.clock().monotonic_ns_ref;
    }
    for (const reader::SymbolMap& map : trace_.symbol_maps())
      if (map.kind == format::kSymbolMapPerf)
        m_.kept_perf_maps[map.pid] = {map.path, std::make_shared<const std::string>(map.text)};
    std::array<std::vector<EventVisitor*>, kEventKindCount> visitors_of{};
    for (size_t kind = 0; kind < kEventKindCount; ++kind)
      for (EventVisitor* v : visitors)
        if (v->wants(static_cast<EventKind>(kind))) visitors_of[kind].push_back(v);
    reader::EventReader events(trace_);
    reader::Event e;
    EventContext ctx;
    ctx.model = &m_;
    while (events.next(e)) {
      if (m_.events++ == 0) m_.first_ns = e.time_ns;
      m_.last_ns = std::max(m_.last_ns, e.time_ns);
      const KnownEvent& k = known_.of(e.descriptor);
      ctx.known = &k;
      uint32_t pid = e.pid, tid = e.tid;
      if (k.names_thread) {
        pid = static_cast<uint32_t>(field_u64(e, k, f::kKernelPid));
        tid = static_cast<uint32_t>(field_u64(e, k, f::kKernelTid));
      }
      ctx.process = process_of(pid);
      ProcessInfo& p = m_.processes[ctx.process];
      ++p.events;
      p.start_ns = std::min(p.start_ns, e.time_ns);
      p.end_ns = std::max(p.end_ns, e.time_ns);
      if (k.kind != EventKind::other) take_in(e, k, ctx.process);
      ctx.image = current_image(ctx.process, e.time_ns);
      if (k.kind == EventKind::kernel_sample) ctx.image = sampled_image(e, k, ctx.process, ctx.image);
      ctx.thread = thread_of(ctx.process, tid, e.time_ns);
      ++m_.threads[ctx.thread].events;
      ctx.unwound = k.kind == EventKind::kernel_sample ? kernel_.unwind(e, k, ctx.image) : 0;
      if (!only_pids_.empty() && std::find(only_pids_.begin(), only_pids_.end(), pid) == only_pids_.end()) continue;
      for (EventVisitor* v : visitors_of[static_cast<size_t>(k.kind)]) v->on_event(e, ctx);
    }
    finish(events);
    for (EventVisitor* v : visitors) v->on_end(m_);
    return std::move(m_);
  }

 private:
  ProcessIndex process_of(uint32_t pid) {
    if (pid == last_pid_ && last_process_ != kNone) return last_process_;
    auto [it, inserted] = m_.process_by_pid.try_emplace(pid, static_cast<ProcessIndex>(m_.processes.size()));
    if (inserted) {
      ProcessInfo p;
      p.pid = pid;
      m_.processes.push_back(std::move(p));
    }
    last_pid_ = pid;
    last_process_ = it->second;
    return it->second;
  }

  // Whether a ProcessExit that `reaper` wrote for `pid` is a thread's end: a
  // debugger's wait (__WALL) also reaps the threads of the program it
  // holds. It is taken as one when the trace knows `pid` as a thread of
  // another process, and neither as a process nor as a child the reaper
  // forked. Scans the threads, only for pids no process has.
  bool reaped_thread(uint32_t pid, ProcessIndex reaper) const {
    if (m_.process_by_pid.count(pid) != 0) return false;
    const std::vector<uint32_t>& forked = m_.processes[reaper].forked;
    if (std::find(forked.begin(), forked.end(), pid) != forked.end()) return false;
    for (const ThreadInfo& t : m_.threads)
      if (t.tid == pid && t.pid != pid) return true;
    return false;
  }

  ImageIndex new_image(ProcessIndex process, uint32_t exec_count, int64_t time_ns) {
    ProcessInfo& p = m_.processes[process];
    if (!p.images.empty()) m_.images[p.images.back()].end_ns = time_ns;
    Image image;
    image.process = process;
    image.pid = p.pid;
    image.exec_count = exec_count;
    image.start_ns = time_ns;
    image.end_ns = time_ns;
    const auto index = static_cast<ImageIndex>(m_.images.size());
    m_.images.push_back(std::move(image));
    p.images.push_back(index);
    return index;
  }

  // The image events of `process` belong to now; the first event of a
  // process without a ProcessStart opens one.
  ImageIndex current_image(ProcessIndex process, int64_t time_ns) {
    const ProcessInfo& p = m_.processes[process];
    return p.images.empty() ? new_image(process, 0, time_ns) : p.images.back();
  }

  // The kernel reports an exec (its Comm record) before execve returns: a
  // sample taken in between carries the old image's user registers (its
  // pc at the execve call in the old libc) and no stack copy (the old
  // memory is gone), yet comes after the new image began. It belongs to
  // the image before when its pc is in none of the new image's modules
  // and in one of the old's. Cost: a scan of the modules, only for samples
  // without a stack copy.
  ImageIndex sampled_image(const reader::Event& e, const KnownEvent& k, ProcessIndex process, ImageIndex image) {
    const ProcessInfo& p = m_.processes[process];
    if (p.images.size() < 2 || p.images.back() != image || !field_blob(e, k, f::kKStack).empty()) return image;
    const unwind::PerfRegisters regs{field_u64(e, k, f::kKRegsMask), field_blob(e, k, f::kKRegs)};
    const auto pc = regs.get(unwind::kPerfIp);
    if (!pc) return image;
    auto mapped_in = [&](ImageIndex i) {
      return std::any_of(m_.images[i].modules.begin(), m_.images[i].modules.end(),
                         [&](const Module& m) { return m.contains(*pc); });
    };
    const ImageIndex before = p.images[p.images.size() - 2];
    return !mapped_in(image) && mapped_in(before) ? before : image;
  }

  ThreadIndex new_thread(ProcessIndex process, uint32_t tid, int64_t time_ns) {
    ProcessInfo& p = m_.processes[process];
    ThreadInfo t;
    t.process = process;
    t.pid = p.pid;
    t.tid = tid;
    t.start_ns = time_ns;
    t.end_ns = time_ns;
    const auto index = static_cast<ThreadIndex>(m_.threads.size());
    m_.threads.push_back(std::move(t));
    p.threads.push_back(index);
    thread_by_tid_[thread_map_key(p.pid, tid)] = index;
    last_thread_key_ = ~uint64_t{0};
    return index;
  }

  ThreadIndex thread_of(ProcessIndex process, uint32_t tid, int64_t time_ns) {
    const uint64_t key = thread_map_key(m_.processes[process].pid, tid);
    if (key == last_thread_key_) return last_thread_;
    auto it = thread_by_tid_.find(key);
    const ThreadIndex t = it != thread_by_tid_.end() ? it->second : new_thread(process, tid, time_ns);
    last_thread_key_ = key;
    last_thread_ = t;
    return t;
  }

  void take_in(const reader::Event& e, const KnownEvent& k, ProcessIndex process) {
    switch (k.kind) {
      case EventKind::process_start: return process_start(e, k, process);
      case EventKind::module_load: {
        Module mod;
        mod.bias = field_u64(e, k, f::kBias);
        mod.start = field_u64(e, k, f::kStart);
        mod.size = field_u64(e, k, f::kSize);
        const auto id = field_blob(e, k, f::kBuildId);
        mod.build_id.assign(id.begin(), id.end());
        mod.path = paths_.canonical(field_str(e, k, f::kPath), mod.build_id);
        mod.load_ns = e.time_ns;
        m_.images[current_image(process, e.time_ns)].modules.push_back(std::move(mod));
        return;
      }
      case EventKind::module_unload: {
        Image& image = m_.images[current_image(process, e.time_ns)];
        const uint64_t bias = field_u64(e, k, f::kUnloadBias);
        const std::string_view path = field_str(e, k, f::kUnloadPath);
        for (auto it = image.modules.rbegin(); it != image.modules.rend(); ++it)
          if (it->bias == bias && it->unload_ns == kNeverNs &&
              (it->path == path || it->path == paths_.canonical(path, it->build_id))) {
            it->unload_ns = e.time_ns;
            break;
          }
        return;
      }
      case EventKind::module_image: return module_image(e, k, process);
      case EventKind::shim_started: {
        Image& image = m_.images[current_image(process, e.time_ns)];
        if (image.shim_start_ns < 0) image.shim_start_ns = static_cast<int64_t>(field_u64(e, k, f::kShimDuration));
        return;
      }
      case EventKind::sampler_start:
        if (m_.sample_hz == 0) m_.sample_hz = static_cast<uint32_t>(field_u64(e, k, f::kSamplerHz));
        return;
      case EventKind::sampler_off: {
        const std::string_view name = field_str(e, k, f::kSamplerOffTracerName);
        const std::string tracer_pid = std::to_string(field_u64(e, k, f::kSamplerOffTracer));
        m_.processes[process].samples_off_under =
            (name.empty() ? std::string("a tracer") : std::string(name)) + " (pid " + tracer_pid + ")";
        return;
      }
      case EventKind::process_fork: {
        const auto child = static_cast<uint32_t>(field_u64(e, k, f::kChildPid));
        m_.processes[process].forked.push_back(child);
        fork_ns_.try_emplace(child, e.time_ns);
        return;
      }
      case EventKind::process_exec: {
        ProcessInfo& p = m_.processes[process];
        pending_exec_[p.pid] = std::string(field_str(e, k, f::kExecPath));
        const std::string_view why = field_str(e, k, f::kUntraceable);
        if (!why.empty()) p.untraceable_exec = pending_exec_[p.pid] + ": " + std::string(why);
        // The calling thread's clock at the end of this image (its next
        // image's ThreadStart starts from about there). A failed exec's
        // thread goes on, and its ThreadEnd later says again.
        if (has_field(k, f::kExecCpuNs) && e.tid != 0)
          if (const uint64_t ns = field_u64(e, k, f::kExecCpuNs); ns != 0)
            m_.threads[thread_of(process, e.tid, e.time_ns)].cpu_ns = ns;
        return;
      }
      case EventKind::process_exec_failed: {
        ProcessInfo& p = m_.processes[process];
        p.exec_failures.push_back(pending_exec_[p.pid] + ": errno " +
                                  std::to_string(field_i64(e, k, f::kErrno)));
        pending_exec_.erase(p.pid);
        if (e.tid != 0) m_.threads[thread_of(process, e.tid, e.time_ns)].cpu_ns = 0;  // its image goes on
        return;
      }
      case EventKind::process_exit: {
        const auto pid = static_cast<uint32_t>(field_u64(e, k, f::kExitPid));
        const bool by_itself = m_.processes[process].pid == pid;
        const uint32_t reaper = m_.processes[process].recorder ? 0 : m_.processes[process].pid;
        if (!by_itself && reaped_thread(pid, process)) return;
        ProcessInfo& p = m_.processes[process_of(pid)];
        // A child that never wrote an event (a vfork child whose exec
        // failed, one that ended before it loaded the shim) is known only
        // from its reaper, its parent: it is placed under it, not at the top.
        if (!by_itself && p.ppid == 0 && p.events == 0 && reaper != 0) p.ppid = reaper;
        // The process itself (as it called exit or _exit), its parent and
        // the recorder may each report it. A reaper's word is the kernel's
        // and wins over the process's own (a destructor may still have
        // crashed), which keeps its time: when the process ended. Between
        // reapers the first wins.
        if (p.end && !(p.end->by_itself && !by_itself)) return;
        ProcessEnd end;
        end.time_ns = p.end ? p.end->time_ns : e.time_ns;
        end.exit_code = static_cast<int32_t>(field_i64(e, k, f::kExitCode));
        end.signal = static_cast<uint8_t>(field_u64(e, k, f::kSignal));
        end.core_dumped = field_u64(e, k, f::kCoreDumped) != 0;
        end.by_itself = by_itself;
        p.end = end;
        return;
      }
      case EventKind::process_running: {
        // Only of a process the trace knows; a pid reused since, by one
        // that ended (its ProcessExit, or the kernel's Exit of it, read
        // into its end after the events), keeps its end.
        const auto pid = static_cast<uint32_t>(field_u64(e, k, f::kExitPid));
        auto it = m_.process_by_pid.find(pid);
        if (it == m_.process_by_pid.end() || m_.processes[it->second].end ||
            m_.processes[it->second].kernel_exit_ns != kNeverNs)
          return;
        ProcessInfo& p = m_.processes[it->second];
        p.running_at_end = true;
        p.end_ns = std::max(p.end_ns, e.time_ns);  // it ran until here (its threads too)
        return;
      }
      case EventKind::command_start: {
        Command& c = commands_[command_key(process, field_u64(e, k, f::kCommandCall))];
        c.process = process;
        c.start_ns = e.time_ns;
        return;
      }
      case EventKind::command_end: {
        auto it = commands_.find(command_key(process, field_u64(e, k, f::kCommandCall)));
        if (it == commands_.end() || it->second.ended) return;
        Command& c = it->second;
        c.ended = true;
        c.end_ns = e.time_ns;
        c.status.exit_code = static_cast<int32_t>(field_i64(e, k, f::kCommandExitCode));
        c.status.signal = static_cast<uint8_t>(field_u64(e, k, f::kCommandSignal));
        c.status.core_dumped = field_u64(e, k, f::kCommandCore) != 0;
        return;
      }
      case EventKind::thread_start: {
        const auto tid = has_field(k, f::kTid) ? static_cast<uint32_t>(field_u64(e, k, f::kTid)) : e.tid;
        const uint64_t key = thread_map_key(m_.processes[process].pid, tid);
        auto it = thread_by_tid_.find(key);
        ThreadIndex t;
        uint64_t earlier_image_cpu_ns = 0;
        // Events the thread wrote before its ThreadStart (none, normally)
        // opened it already: adopt that one. A started thread's tid seen
        // again is a reused tid: a new thread, or the same one in the
        // image it exec'd.
        if (it != thread_by_tid_.end() && !m_.threads[it->second].started && !m_.threads[it->second].ended) {
          t = it->second;
        } else {
          if (it != thread_by_tid_.end() && !m_.threads[it->second].ended) {
            m_.threads[it->second].end_ns = e.time_ns;
            m_.threads[it->second].ended = true;
          }
          if (it != thread_by_tid_.end()) earlier_image_cpu_ns = m_.threads[it->second].cpu_ns;
          t = new_thread(process, tid, e.time_ns);
        }
        ThreadInfo& th = m_.threads[t];
        th.started = true;
        th.start_ns = std::min(th.start_ns, e.time_ns);
        th.parent_tid = static_cast<uint32_t>(field_u64(e, k, f::kParentTid));
        // Only the thread a new image's shim finds running (no parent) is
        // the one its tid had before: a created thread's clock starts anew.
        if (th.parent_tid == 0) th.cpu_ns_earlier_images = earlier_image_cpu_ns;
        if (has_field(k, f::kThreadStartCpuNs)) th.cpu_ns_at_start = field_u64(e, k, f::kThreadStartCpuNs);
        return;
      }
      case EventKind::thread_end: {
        const auto tid = has_field(k, f::kTid) ? static_cast<uint32_t>(field_u64(e, k, f::kTid)) : e.tid;
        ThreadInfo& th = m_.threads[thread_of(process, tid, e.time_ns)];
        th.ended = true;
        th.end_ns = e.time_ns;
        th.with_process = field_u64(e, k, f::kWithProcess) != 0;
        if (has_field(k, f::kThreadCpuNs)) th.cpu_ns = field_u64(e, k, f::kThreadCpuNs);
        return;
      }
      case EventKind::thread_name: {
        const auto tid = static_cast<uint32_t>(field_u64(e, k, f::kTid));
        if (tid == 0) return;  // the shim could not tell which thread
        ThreadInfo& th = m_.threads[thread_of(process, tid, e.time_ns)];
        const std::string_view name = field_str(e, k, f::kThreadName);
        if (th.names.empty() || th.names.back() != name) th.names.emplace_back(name);
        return;
      }
      case EventKind::stack: {
        const auto id = static_cast<uint32_t>(field_u64(e, k, f::kStackId));
        const StackKey key = stack_key(current_image(process, e.time_ns), id);
        if (key != 0) m_.stacks[key] = m_.keep_frames(field_blob(e, k, f::kFrames));
        return;
      }
      case EventKind::kernel_mmap: {
        const ImageIndex image = current_image(process, e.time_ns);
        kernel_.mmap(e, k, image);
        kernel_exe(m_.images[image], field_str(e, k, f::kKMmapPath));
        return;
      }
      case EventKind::kernel_symbol:
        m_.kernel_symbols.push_back({field_u64(e, k, f::kKSymbolAddress), std::string(field_str(e, k, f::kKSymbolName)),
                                     std::string(field_str(e, k, f::kKSymbolModule))});
        return;
      case EventKind::kernel_vdso_image: {
        const auto image = field_blob(e, k, f::kKVdsoImage);
        kernel_.set_vdso(std::vector<uint8_t>(image.begin(), image.end()));
        return;
      }
      case EventKind::kernel_comm: return kernel_comm(e, k, process);
      case EventKind::kernel_fork: return kernel_fork(e, k, process);
      case EventKind::kernel_exit: {
        const auto tid = static_cast<uint32_t>(field_u64(e, k, f::kKernelTid));
        ThreadInfo& th = m_.threads[thread_of(process, tid, e.time_ns)];
        if (!th.ended) {
          th.ended = true;
          th.end_ns = e.time_ns;
        }
        ProcessInfo& p = m_.processes[process];
        if (tid == p.pid) p.kernel_exit_ns = e.time_ns;
        return;
      }
      case EventKind::kernel_syscall_enter: {
        // exit_group's status: how a process ended when nothing else says.
        if (field_str(e, k, f::kKSyscallName) != "exit_group") return;
        const auto args = field_blob(e, k, f::kKSyscallArgs);
        uint64_t status = 0;
        if (args.size() < sizeof status) return;
        std::memcpy(&status, args.data(), sizeof status);
        m_.processes[process].exit_group_status = static_cast<int32_t>(status & 0xff);
        return;
      }
      default:
        return;
    }
  }

  // The kernel's comm record: a thread's name, or an exec (a new image,
  // unless the process's only image so far is empty: the exec that
  // started the recording). The preload's ProcessStart adopts that image.
  void kernel_comm(const reader::Event& e, const KnownEvent& k, ProcessIndex process) {
    ProcessInfo& p = m_.processes[process];
    const std::string_view comm = field_str(e, k, f::kKComm);
    if (field_u64(e, k, f::kKExec) != 0) {
      const ImageIndex current = current_image(process, e.time_ns);
      const Image& im = m_.images[current];
      if (im.started || !im.modules.empty()) new_image(process, im.exec_count + 1, e.time_ns);
      if (p.name.empty() || !p.recorder) p.name = comm;
      m_.images[current_image(process, e.time_ns)].comm = comm;
    }
    const auto tid = static_cast<uint32_t>(field_u64(e, k, f::kKernelTid));
    ThreadInfo& th = m_.threads[thread_of(process, tid, e.time_ns)];
    if (!comm.empty() && (th.names.empty() || th.names.back() != comm)) th.names.emplace_back(comm);
    if (p.name.empty()) p.name = comm;
    // A process attached to running (no exec seen): its main thread's name
    // names the image.
    Image& im = m_.images[current_image(process, e.time_ns)];
    if (tid == p.pid && im.comm.empty()) im.comm = comm;
  }

  // An image that only the kernel describes (no ProcessStart) takes as
  // its exe the first mapped file whose name its comm begins: the program
  // the exec loaded, before its interpreter and libraries. A script keeps
  // none (the kernel maps its interpreter, under another name).
  static void kernel_exe(Image& im, std::string_view path) {
    if (im.started || !im.exe.empty() || im.comm.empty() || path.empty() || path.front() != '/') return;
    const std::string_view file = path.substr(path.rfind('/') + 1);
    if (file.substr(0, im.comm.size()) == im.comm) im.exe = path;
  }

  // A new process (pid != parent_pid) starts with its parent's mappings,
  // which the kernel does not report again.
  void kernel_fork(const reader::Event& e, const KnownEvent& k, ProcessIndex process) {
    const auto parent_pid = static_cast<uint32_t>(field_u64(e, k, f::kKParentPid));
    const uint32_t child_pid = m_.processes[process].pid;
    if (parent_pid == child_pid || parent_pid == 0) return;  // a thread
    if (m_.processes[process].ppid == 0) m_.processes[process].ppid = parent_pid;
    const ProcessIndex parent = process_of(parent_pid);  // may grow m_.processes
    ProcessInfo& pp = m_.processes[parent];
    if (std::find(pp.forked.begin(), pp.forked.end(), child_pid) == pp.forked.end()) pp.forked.push_back(child_pid);
    if (pp.images.empty()) return;
    const ImageIndex from = pp.images.back();
    const ImageIndex to = current_image(process, e.time_ns);
    if (from != to && m_.images[to].modules.empty()) m_.images[to].modules = m_.images[from].modules;
  }

  // A chunk of a module's image, into the latest module of the image with
  // that bias and path (its ModuleLoad came first).
  void module_image(const reader::Event& e, const KnownEvent& k, ProcessIndex process) {
    Image& image = m_.images[current_image(process, e.time_ns)];
    const uint64_t bias = field_u64(e, k, f::kImageBias);
    const std::string_view path = field_str(e, k, f::kImagePath);
    const uint64_t offset = field_u64(e, k, f::kImageOffset);
    const auto bytes = field_blob(e, k, f::kImageBytes);
    // An image never spans more than its mapping could: a bad offset is
    // damage, not a reason to allocate gigabytes.
    constexpr uint64_t kMaxImage = 1 << 24;
    if (bytes.empty() || offset > kMaxImage || bytes.size() > kMaxImage - offset) return;
    for (auto it = image.modules.rbegin(); it != image.modules.rend(); ++it) {
      if (it->bias != bias || it->path != path) continue;
      if (it->image.size() < offset + bytes.size()) it->image.resize(offset + bytes.size());
      std::copy(bytes.begin(), bytes.end(), it->image.begin() + static_cast<std::ptrdiff_t>(offset));
      return;
    }
  }

  void process_start(const reader::Event& e, const KnownEvent& k, ProcessIndex process) {
    ProcessInfo& p = m_.processes[process];
    const auto exec_count = static_cast<uint32_t>(field_u64(e, k, f::kExecCount));
    ImageIndex i;
    // Events of the process before its ProcessStart opened an image for it
    // already: that is this image.
    if (!p.images.empty() && !m_.images[p.images.back()].started) {
      i = p.images.back();
      m_.images[i].exec_count = exec_count;
    } else {
      i = new_image(process, exec_count, e.time_ns);
    }
    if (exec_count > 0) pending_exec_.erase(p.pid);  // the exec's new image attached
    Image& image = m_.images[i];
    image.started = true;
    image.exe = field_str(e, k, f::kExe);
    image.cwd = field_str(e, k, f::kCwd);
    const auto ppid = static_cast<uint32_t>(field_u64(e, k, f::kPpid));
    if (exec_count == 0 && ppid != 0) p.ppid = ppid;
  }

  // system() and popen() reap their shell inside glibc: each CommandEnd's
  // status goes to the one child of its process that started between the
  // command's two events and has no reaper's word. Shortest commands
  // first, so a system() run while a popen() pipe is open takes its own
  // shell before the popen() looks. Where two children could be the
  // command's shell (two threads running commands at once), neither gets
  // it: a guess would be a silently wrong answer.
  void end_commands() {
    std::vector<const Command*> done;
    for (const auto& [key, c] : commands_)
      if (c.ended && c.start_ns != kNeverNs) done.push_back(&c);
    std::sort(done.begin(), done.end(), [](const Command* a, const Command* b) {
      return std::make_pair(a->end_ns - a->start_ns, a->start_ns) < std::make_pair(b->end_ns - b->start_ns, b->start_ns);
    });
    std::vector<bool> taken(m_.processes.size(), false);
    for (const Command* c : done) {
      const uint32_t parent = m_.processes[c->process].pid;
      ProcessIndex shell = kNone;
      size_t candidates = 0;
      for (ProcessIndex i = 0; i < m_.processes.size(); ++i) {
        const ProcessInfo& p = m_.processes[i];
        if (taken[i] || p.ppid != parent || p.recorder || (p.end && !p.end->by_itself)) continue;
        if (p.start_ns < c->start_ns || p.start_ns > c->end_ns) continue;
        shell = i;
        ++candidates;
      }
      if (candidates != 1) continue;
      taken[shell] = true;
      ProcessInfo& p = m_.processes[shell];
      ProcessEnd end = c->status;
      // It ended when it said so, or with its last event.
      end.time_ns = p.end ? p.end->time_ns : p.end_ns;
      end.by_itself = false;
      p.end = end;
    }
  }

  void finish(const reader::EventReader& events) {
    end_commands();
    // Only the kernel saw these end: a process without the preload.
    for (ProcessInfo& p : m_.processes) {
      if (p.end || p.kernel_exit_ns == kNeverNs) continue;
      ProcessEnd end;
      end.time_ns = p.kernel_exit_ns;
      end.exit_code = p.exit_group_status.value_or(0);
      end.how_known = p.exit_group_status.has_value();
      end.by_itself = true;
      p.end = end;
    }
    // An exec that neither failed nor brought a traced image: the new
    // program ran without reaching the recorder (in another network
    // namespace its abstract socket is out of sight, and a program that
    // cannot load the shim stays out). Said, not left out silently.
    for (const auto& [pid, path] : pending_exec_) {
      ProcessInfo& p = m_.processes[process_of(pid)];
      if (p.untraceable_exec.empty()) p.untraceable_exec = path + ": it never reached the recorder";
    }
    for (ProcessInfo& p : m_.processes) {
      if (p.end) p.end_ns = std::max(p.end_ns, p.end->time_ns);
      // A process with no event of its own (one the trace met only in its
      // PROCESS block, its parent's Fork or its reaper's word: a trace read
      // while its recording goes on, a child that died before the shim ran)
      // began at its fork, else no later than its end. With neither, when
      // is unknown: it is placed after every event read.
      if (p.start_ns == kNeverNs) {
        const auto fork = fork_ns_.find(p.pid);
        p.start_known = fork != fork_ns_.end() || p.end;
        p.start_ns = fork != fork_ns_.end() ? fork->second : p.end ? p.end->time_ns : m_.last_ns;
        p.end_ns = std::max(p.end_ns, p.start_ns);
      }
      if (!p.images.empty()) {
        m_.images[p.images.back()].end_ns = p.end_ns;
        // A traced image announces itself: the last block is the last
        // image's. A process the recorder attached to was announced once,
        // as it ran then: its first image, when only the kernel saw the
        // execs after it.
        const Image& last = m_.images[p.images.back()];
        const bool announced_before_execs = !last.started && last.exec_count > 0 && !last.comm.empty();
        m_.images[announced_before_execs ? p.images.front() : p.images.back()].command_line = p.command_line;
        image_command_lines(p);
      }
      for (ThreadIndex t : p.threads)
        if (!m_.threads[t].ended) m_.threads[t].end_ns = std::max(m_.threads[t].end_ns, p.end_ns);
    }
    kernel_.finish();
    std::stable_sort(m_.kernel_symbols.begin(), m_.kernel_symbols.end(),
                     [](const KernelSymbolEntry& a, const KernelSymbolEntry& b) { return a.address < b.address; });
    TraceHealth& h = m_.health;
    if (trace_.damage()) h.damage.push_back(*trace_.damage());
    h.damage.insert(h.damage.end(), events.damages().begin(), events.damages().end());
    std::stable_sort(h.damage.begin(), h.damage.end(),
                     [](const reader::Damage& a, const reader::Damage& b) { return a.offset < b.offset; });
    h.streams = reader::stream_stats(trace_);
    for (const reader::StreamStats& s : h.streams) h.lost_events += s.lost;
    h.warnings = trace_.warnings();
  }

  // The k-th PROCESS block of a pid announced its k-th image, when the
  // counts agree (a trace without ProcessStart, or cut short, may not).
  void image_command_lines(const ProcessInfo& p) {
    std::vector<const reader::Process*> blocks;
    for (const reader::Process& b : trace_.process_blocks())
      if (b.pid == p.pid) blocks.push_back(&b);
    if (blocks.size() != p.images.size()) return;
    for (size_t i = 0; i < blocks.size(); ++i) m_.images[p.images[i]].command_line = blocks[i]->arguments;
  }

  const reader::Trace& trace_;
  std::vector<uint32_t> only_pids_;  // LoadOptions::only_pids
  KnownEvents known_;
  TraceModel m_;
  ModulePaths paths_;  // before kernel_, which uses it
  KernelModules kernel_;
  std::unordered_map<uint64_t, ThreadIndex> thread_by_tid_;  // the current thread of (pid, tid)
  std::unordered_map<uint32_t, std::string> pending_exec_;  // Exec's path until the next image
  std::unordered_map<uint32_t, int64_t> fork_ns_;  // a child pid: the time of the Fork that made it
  // A system() or popen() command: CommandStart and CommandEnd.
  struct Command {
    ProcessIndex process = kNone;
    int64_t start_ns = kNeverNs;
    int64_t end_ns = 0;
    bool ended = false;
    ProcessEnd status;
  };
  static uint64_t command_key(ProcessIndex process, uint64_t call) { return uint64_t{process} << 32 | (call & 0xFFFFFFFF); }
  std::map<uint64_t, Command> commands_;  // by command_key, in order
  uint32_t last_pid_ = 0;
  ProcessIndex last_process_ = kNone;
  uint64_t last_thread_key_ = ~uint64_t{0};
  ThreadIndex last_thread_ = kNone;
};

}  // namespace

TraceModel load_trace(const reader::Trace& trace, std::span<EventVisitor* const> visitors,
                      const LoadOptions& options) {
  return Loader(trace, options).run(visitors);
}

}  // namespace spoor::analysis
