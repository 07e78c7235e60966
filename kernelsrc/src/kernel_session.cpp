#include "spoor/kernelsrc/kernel_session.h"

#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <limits>
#include <set>
#include <span>

#include "spoor/kernelsrc/block_devices.h"
#include "spoor/kernelsrc/event_release.h"
#include "spoor/kernelsrc/kallsyms_cache.h"
#include "spoor/kernelsrc/kernel_convert.h"
#include "spoor/kernelsrc/kernel_events.h"
#include "spoor/kernelsrc/kernel_stream.h"
#include "spoor/kernelsrc/kernel_symbols.h"
#include "spoor/kernelsrc/perf_ring.h"
#include "spoor/kernelsrc/proc_maps.h"
#include "spoor/kernelsrc/time_order.h"
#include "spoor/kernelsrc/tracefs.h"

namespace spoor::kernelsrc {
namespace {

constexpr size_t kPage = 4096;

int perf_event_open(perf_event_attr* attr, pid_t pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

int read_int_file(const char* path, int fallback) {
  std::ifstream in(path);
  int v = fallback;
  return in >> v ? v : fallback;
}

// Why opening `e` failed, and what would make it work.
std::string open_failure(const PlannedEvent& e, int err, const Privilege& p, bool attach) {
  std::string what = e.source + (e.tracepoint.empty() ? "" : " (" + e.tracepoint + ")") + ": perf_event_open: " +
                     std::strerror(err);
  const int needed = e.machine_wide ? (e.tracepoint.empty() ? 0 : -1) : (e.attr.exclude_kernel ? 2 : 1);
  switch (err) {
    case EACCES:
    case EPERM:
      // The kernel asks what ptrace would: a process of another user, or
      // one that changed credentials (setuid), is not this user's to watch.
      if (attach && !e.machine_wide && !p.perfmon)
        return what + "; a process attached to must be this user's own and not setuid (or record as root or "
                      "with CAP_PERFMON)";
      return what + "; " + paranoid_hint(p, needed);
    case ENOENT:
    case EOPNOTSUPP:
      return what + "; this kernel or machine does not have it";
    case EMFILE:
      return what + "; too many open files (raise ulimit -n)";
    case EINVAL:
      if (e.attr.freq)
        return what + "; the rate may be above kernel.perf_event_max_sample_rate (" +
               std::to_string(read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", 0)) + ")";
      return what;
    default:
      return what;
  }
}

// One CPU's ring: the first event opened on the CPU owns the mapping;
// every other event of the CPU writes into it (PERF_EVENT_IOC_SET_OUTPUT),
// so the records of one CPU come out in one place, nearly in time order;
// `order` holds them until they can be written in it.
struct CpuRing {
  int fd = -1;
  void* map = MAP_FAILED;
  size_t map_bytes = 0;
  std::unique_ptr<PerfRing> ring;
  std::unique_ptr<KernelStream> stream;
  TimeOrder order;
  uint64_t last_time_ns = 0;  // of the last record read: a record without a time keeps its place
};

// How long a drained record waits for records stamped before it that the
// kernel has not written yet: a hundred times the 38 us seen in a VM, and
// a host scheduler's tick (250 Hz); four of the recorder's 1 ms drains,
// where perf sorts within one round of reading its rings. Longer costs the
// drain more (the copies leave the cache before they are converted): with
// 1.2 M syscall records, drain CPU +12% at 4 ms, +28% at 20 ms.
constexpr uint64_t kHoldNs = 4'000'000;
// drain_up_to's bound for the last drain.
constexpr uint64_t kEveryRecord = std::numeric_limits<uint64_t>::max();

// This process's vDSO, the same image every process of its ABI maps; empty
// where it has none or it would not fit one Blob.
std::span<const uint8_t> own_vdso() {
  const auto* base = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) return {};
  for (const Mapping& m : executable_mappings(getpid()))
    if (m.path == "[vdso]" && m.start == reinterpret_cast<uintptr_t>(base) && m.length <= kStackChunkBytes)
      return {base, static_cast<size_t>(m.length)};
  return {};
}

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// Maps the ring of `fd` (1 + 2^n pages) as the CPU's; when locked memory
// runs short, with fewer pages, down to `min_pages`. False with errno set
// when none fits.
bool map_ring(CpuRing& ring, int fd, uint32_t data_pages, uint32_t min_pages) {
  for (uint32_t pages = data_pages; pages >= min_pages; pages /= 2) {
    ring.map_bytes = (1 + pages) * kPage;
    ring.map = mmap(nullptr, ring.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring.map != MAP_FAILED) break;
  }
  if (ring.map == MAP_FAILED) return false;
  ring.fd = fd;
  auto* base = static_cast<uint8_t*>(ring.map);
  ring.ring = std::make_unique<PerfRing>(reinterpret_cast<perf_event_mmap_page*>(base), base + kPage,
                                         ring.map_bytes - kPage);
  return true;
}

}  // namespace

uint64_t TickConversion::ticks(uint64_t monotonic_ns) const {
  const __int128 dns = static_cast<__int128>(monotonic_ns) - clock.monotonic_ns_ref;
  const __int128 dticks = dns * static_cast<__int128>(clock.freq_millihz) / 1000000000000;
  return static_cast<uint64_t>(static_cast<__int128>(clock.tick_ref) + dticks);
}

Privilege current_privilege() {
  Privilege p;
  p.paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid", 2);
  if (geteuid() == 0) {
    p.perfmon = true;
    return p;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) == 0) {
    auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1; };
    p.perfmon = has(38 /* CAP_PERFMON */) || has(CAP_SYS_ADMIN);
  }
  return p;
}

struct KernelSession::State {
  Privilege privilege;
  std::vector<int> fds;  // every fd opened (ring owners included)
  std::vector<CpuRing> cpus;
  KernelConvert convert;
  // What snapshot_maps() read of each process, until a drain writes it;
  // meanwhile, the (start, path) of every MMAP2 the kernel reported.
  struct Snapshot {
    uint32_t pid = 0;
    uint64_t ticks = 0;
    std::vector<Mapping> mappings;
    std::vector<std::pair<uint32_t, std::string>> threads;  // (tid, comm) of a process attached to
  };
  std::vector<Snapshot> snapshots;
  std::set<std::pair<uint64_t, std::string>> kernel_mmaps;
  uint64_t first_snapshot_ticks = 0;
  // When the events were opened (open_tasks sets it): before the
  // program's exec, whose MMAP2 records come first in its rings.
  uint64_t opened_ns = 0;
  // The Session event's fields, written at the first drain.
  uint32_t sample_hz = 0;
  std::string sample_event;
  std::string sources;
  bool session_written = false;
  // The Session, BlockDevice and snapshot Mmap records: a stream of their
  // own. Written at the first drain with the time of the exec, they would
  // come before older records drained from a CPU's ring into the same
  // stream (the machine-wide sched events are on before the exec), and a
  // stream whose times go back holds those records behind it in the
  // reader's merge: other CPUs' later switches were read first, and
  // off-CPU times came out negative.
  std::unique_ptr<KernelStream> session_stream;
  // /proc/kallsyms, read while the program runs where samples or faults
  // can see the kernel (~42 ms here: at the end it was the whole wait
  // after a short program), on a thread at nice 19 so that it takes idle
  // CPU, or the copy a recording kept (kallsyms_cache.h); invalid where
  // they cannot see the kernel.
  std::future<KallsymsText> kallsyms;
  std::string kallsyms_cache;  // PlanOptions::kallsyms_cache
  // The events opened for each task, to open for a thread found later.
  struct PerTask {
    perf_event_attr attr;
    EventMeta meta;
  };
  std::vector<PerTask> per_task;
  bool tracepoints = false;  // some event is a tracepoint's: slow to close (event_release.h)
  uint32_t ring_data_pages = 0, ring_min_data_pages = 0;

  // Puts `fd` (an event on `cpu`) in the CPU's ring: the first one owns it.
  // False (errno set) when the ring cannot be mapped; a ring it cannot
  // share is said in `messages`, the recording goes on without it.
  bool connect(int fd, uint32_t cpu, const EventMeta& meta, std::vector<std::string>& messages) {
    fds.push_back(fd);
    CpuRing& ring = cpus[cpu];
    if (ring.fd < 0) {
      if (!map_ring(ring, fd, ring_data_pages, ring_min_data_pages)) return false;
    } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring.fd) != 0) {
      messages.push_back("kernel: " + meta.source + " on CPU " + std::to_string(cpu) +
                         ": cannot share the CPU's ring: " + std::strerror(errno));
      return true;
    }
    uint64_t id = 0;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) convert.add_event(id, meta);
    return true;
  }

  void unmap_rings() {
    for (CpuRing& c : cpus)
      if (c.map != MAP_FAILED) {
        munmap(c.map, c.map_bytes);
        c.map = MAP_FAILED;
      }
  }

  ~State() {
    unmap_rings();
    for (int fd : fds) close(fd);
  }
};

KernelSession::KernelSession() = default;
KernelSession::~KernelSession() = default;

bool KernelSession::opened() const { return state_ != nullptr; }

void KernelSession::close_events() {
  if (!state_) return;
  State& s = *state_;
  s.unmap_rings();
  release_events(std::move(s.fds), s.tracepoints);
  s.fds.clear();
}

bool KernelSession::open(const PlanOptions& requested, pid_t pid, uint32_t ncpus, std::string* error) {
  return open_tasks(requested, {pid}, ncpus, error);
}

bool KernelSession::attach(const PlanOptions& requested, const std::vector<pid_t>& pids, uint32_t ncpus,
                           std::string* error) {
  PlanOptions options = requested;
  options.attach = true;
  std::set<pid_t> tasks;
  for (const pid_t pid : pids) {
    const std::vector<pid_t> threads = task_ids(pid);
    if (threads.empty()) {
      *error = "no process " + std::to_string(pid) + " (it is not running, or not visible from here)";
      return false;
    }
    tasks.insert(threads.begin(), threads.end());
  }
  if (!open_tasks(options, std::vector<pid_t>(tasks.begin(), tasks.end()), ncpus, error)) return false;
  // A thread started between the listing and the opening was started by
  // one that had no events yet, so none were inherited: until a listing
  // finds no new one (a program starting threads without pause could
  // outrun a few rounds: the ones after that go unseen).
  for (int round = 0; round < 8; ++round) {
    std::vector<pid_t> fresh;
    for (const pid_t pid : pids)
      for (const pid_t tid : task_ids(pid))
        if (tasks.insert(tid).second) fresh.push_back(tid);
    if (fresh.empty()) break;
    for (const pid_t tid : fresh) open_task(tid);
  }
  return true;
}

bool KernelSession::open_tasks(const PlanOptions& requested, const std::vector<pid_t>& tasks, uint32_t ncpus,
                               std::string* error) {
  auto s = std::make_unique<State>();
  PlanOptions options = requested;
  options.privilege = s->privilege = current_privilege();
  s->kallsyms_cache = options.kallsyms_cache;
  AttrPlan plan;
  {
    Tracefs tracefs;  // a private mount, if any, is gone when planning is done
    plan = plan_attrs(options, [&](const std::string& g, const std::string& n) { return tracefs.lookup(g, n); });
    for (const std::string& note : plan.notes) messages_.push_back("kernel: " + note);
    for (const Unavailable& u : plan.unavailable) messages_.push_back("kernel: " + u.source + " unavailable: " + u.reason);

    s->cpus.resize(ncpus);
    s->ring_data_pages = plan.ring_data_pages;
    s->ring_min_data_pages = plan.ring_min_data_pages;
    for (const PlannedEvent& e : plan.events) {
      EventMeta meta;
      meta.role = e.role;
      meta.source = e.source;
      meta.syscall = e.syscall;
      if (!e.tracepoint.empty()) {
        // The RAW data is read by field offsets from the tracepoint's format.
        const size_t colon = e.tracepoint.find(':');
        if (const TracepointFormat* f = tracefs.format(e.tracepoint.substr(0, colon), e.tracepoint.substr(colon + 1)))
          meta.raw = raw_layout(e.role, *f);
        if (!meta.raw.complete) {
          messages_.push_back("kernel: " + e.source + " unavailable: " + e.tracepoint +
                              ": its format lacks a field spoor reads");
          continue;
        }
      }
      perf_event_attr attr = e.attr;
      std::vector<std::pair<uint32_t, int>> opened;  // (cpu, fd)
      int failure = 0;
      // A machine-wide event is opened once per CPU; the others for each
      // task too. A task gone meanwhile (ESRCH) is skipped.
      const std::vector<pid_t> targets = e.machine_wide ? std::vector<pid_t>{-1} : tasks;
      for (const pid_t task : targets) {
        for (uint32_t cpu = 0; cpu < ncpus && failure == 0; ++cpu) {
          int fd = perf_event_open(&attr, task, static_cast<int>(cpu));
          if (fd < 0 && opened.empty() && e.fallback &&
              std::find(e.fallback_errnos.begin(), e.fallback_errnos.end(), errno) != e.fallback_errnos.end()) {
            attr = *e.fallback;
            messages_.push_back("kernel: " + e.fallback_note);
            fd = perf_event_open(&attr, task, static_cast<int>(cpu));
          }
          if (fd < 0 && errno == ENODEV) continue;  // an offline CPU
          if (fd < 0 && errno == ESRCH && options.attach) break;  // the thread ended
          if (fd < 0) {
            failure = errno;
            break;
          }
          opened.emplace_back(cpu, fd);
        }
        if (failure != 0) break;
      }
      if (failure != 0) {
        for (auto& [cpu, fd] : opened) close(fd);
        if (e.role == Role::sideband) {
          *error = "kernel sources unavailable: " + open_failure(e, failure, s->privilege, options.attach);
          return false;
        }
        messages_.push_back("kernel: " + e.source + " unavailable: " + open_failure(e, failure, s->privilege, options.attach));
        continue;
      }
      if (attr.type == PERF_TYPE_TRACEPOINT) s->tracepoints = true;
      if (e.role == Role::cpu_sample) {
        s->sample_hz = static_cast<uint32_t>(attr.freq ? attr.sample_freq : 0);
        s->sample_event = attr.type == PERF_TYPE_SOFTWARE ? "cpu-clock" : "cycles";
      }
      if (e.source != "sideband" && ("," + s->sources + ",").find("," + e.source + ",") == std::string::npos)
        s->sources += (s->sources.empty() ? "" : ",") + e.source;
      meta.sample_type = attr.sample_type;
      meta.regs_mask = attr.sample_regs_user;
      const bool sees_kernel = e.role == Role::cpu_sample || e.role == Role::fault_minor || e.role == Role::fault_major;
      if (sees_kernel && !attr.exclude_kernel && !s->kallsyms.valid())
        s->kallsyms = std::async(std::launch::async, [cache = options.kallsyms_cache] {
          (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
          if (std::optional<KallsymsText> kept = load_kallsyms_cache(cache)) return std::move(*kept);
          return read_kallsyms_text();
        });
      for (auto& [cpu, fd] : opened) {
        if (!s->connect(fd, cpu, meta, messages_)) {
          *error = "cannot map the kernel ring of CPU " + std::to_string(cpu) + ": " + std::strerror(errno) +
                   " (locked memory: ulimit -l, sysctl kernel.perf_event_mlock_kb)";
          return false;
        }
      }
      if (!e.machine_wide) s->per_task.push_back({attr, meta});
    }
  }
  s->opened_ns = monotonic_ns();
  state_ = std::move(s);
  return true;
}

void KernelSession::open_task(pid_t tid) {
  State& s = *state_;
  for (const State::PerTask& e : s.per_task) {
    perf_event_attr attr = e.attr;
    for (uint32_t cpu = 0; cpu < s.cpus.size(); ++cpu) {
      const int fd = perf_event_open(&attr, tid, static_cast<int>(cpu));
      if (fd < 0) {
        if (errno == ENODEV) continue;
        if (errno != ESRCH)
          messages_.push_back("kernel: " + e.meta.source + " for thread " + std::to_string(tid) + ": perf_event_open: " +
                              std::strerror(errno));
        break;
      }
      (void)s.connect(fd, cpu, e.meta, messages_);
    }
  }
}

std::vector<pid_t> task_ids(pid_t pid) {
  std::vector<pid_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const std::string name = entry.path().filename().string();
    char* end = nullptr;
    const long id = std::strtol(name.c_str(), &end, 10);
    if (end != name.c_str() && *end == '\0' && id > 0) ids.push_back(static_cast<pid_t>(id));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void KernelSession::snapshot_maps(pid_t pid, uint64_t ticks_now, bool with_threads) {
  if (!state_) return;
  State::Snapshot snap;
  snap.pid = static_cast<uint32_t>(pid);
  snap.ticks = ticks_now;
  snap.mappings = executable_mappings(pid);
  if (with_threads)
    for (const pid_t tid : task_ids(pid)) {
      std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
      std::string comm;
      if (std::getline(in, comm)) snap.threads.emplace_back(static_cast<uint32_t>(tid), comm);
    }
  if (state_->first_snapshot_ticks == 0) state_->first_snapshot_ticks = ticks_now;
  // The kernel's own MMAP2 records of them are in the rings (published
  // before this read), so the first drain still sees every one.
  if (!snap.mappings.empty()) {
    State* s = state_.get();
    s->convert.set_on_mmap([s](uint64_t start, std::string_view path) { s->kernel_mmaps.emplace(start, path); });
  }
  state_->snapshots.push_back(std::move(snap));
}

uint32_t KernelSession::describe(TraceWriter& writer, uint32_t first_stream, uint32_t recorder_pid) {
  if (!state_) return 0;
  const auto cpus = static_cast<uint32_t>(state_->cpus.size());
  for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
    writer.stream(first_stream + cpu, recorder_pid, cpu);
    state_->cpus[cpu].stream = std::make_unique<KernelStream>(first_stream + cpu, cpu, recorder_pid);
  }
  writer.stream(first_stream + cpus, recorder_pid, 0);
  state_->session_stream = std::make_unique<KernelStream>(first_stream + cpus, 0, recorder_pid);
  return cpus + 1;
}

void KernelSession::drain(TraceWriter& writer, const TickConversion& clock) {
  const uint64_t now = monotonic_ns();
  drain_up_to(writer, clock, now > kHoldNs ? now - kHoldNs : 0, now);
}

void KernelSession::drain_up_to(TraceWriter& writer, const TickConversion& clock, uint64_t up_to_ns, uint64_t now_ns) {
  if (!state_) return;
  State& s = *state_;
  // Made once here, not per record at the call of convert().
  const std::function<uint64_t(uint64_t)> ticks = [&clock](uint64_t ns) { return clock.ticks(ns); };
  if (!s.session_written && s.session_stream) {
    // At the exec when snapshot_maps() saw it, so it comes before the
    // program's first record; else now.
    const uint64_t at = s.first_snapshot_ticks != 0 ? s.first_snapshot_ticks : clock.ticks(now_ns);
    // Samples may land in the vDSO, of which no file can be read later.
    // Its image is dated before the exec's [vdso] mapping: samples taken
    // between the exec and the snapshot are unwound through it too.
    const uint64_t image_at = std::min(at, clock.ticks(s.opened_ns));
    if (s.sample_hz != 0)
      if (const std::span<const uint8_t> vdso = own_vdso(); !vdso.empty())
        s.session_stream->append(writer, kVdsoImage, image_at, Blob{vdso.data(), static_cast<uint32_t>(vdso.size())});
    s.session_stream->append(writer, kSession, at, s.sample_hz, Str(s.sample_event.data(), s.sample_event.size()),
                             Str(s.sources.data(), s.sources.size()));
    // The devices' names beside it: the block records name devices by
    // dev_t only, and sysfs is only on this machine, now.
    if (("," + s.sources + ",").find(",block,") != std::string::npos)
      for (const BlockDeviceName& d : block_device_names())
        s.session_stream->append(writer, kBlockDevice, at, d.dev, Str(d.name.data(), d.name.size()));
    s.session_written = true;
  }
  for (uint32_t cpu = 0; cpu < s.cpus.size(); ++cpu) {
    CpuRing& c = s.cpus[cpu];
    if (!c.ring || !c.stream) continue;
    const uint64_t corrupt_before = c.ring->corrupt();
    c.ring->drain([&](Bytes record) {
      // A record without a time (convert() counts it) keeps its place.
      uint64_t time = 0;
      if (s.convert.time_of(record, &time)) c.last_time_ns = time;
      c.order.hold(record, c.last_time_ns);
    });
    c.stream->add_lost(c.ring->corrupt() - corrupt_before);
    c.order.release(up_to_ns, [&](Bytes record) { s.convert.convert(record, cpu, ticks, writer, *c.stream); });
  }
  // The mappings made before the events were on: the ones the kernel did
  // not report itself, at the time they were read. Written once every
  // record stamped before that time has been converted (the kernel's
  // MMAP2 records of them among those), then the MMAP2 records need no
  // more bookkeeping.
  const bool every_record = up_to_ns == kEveryRecord;
  if (s.snapshots.empty() || !s.session_stream) return;
  KernelStream& out = *s.session_stream;
  auto due = [&](const State::Snapshot& snap) { return every_record || clock.ticks(up_to_ns) >= snap.ticks; };
  for (const State::Snapshot& snap : s.snapshots) {
    if (!due(snap)) continue;
    // A process attached to: its threads' names, the kernel's Comm records
    // as they would have come from its exec and renames.
    for (const auto& [tid, comm] : snap.threads)
      out.append(writer, kComm, snap.ticks, snap.pid, tid, Str(comm.data(), comm.size()), false);
    for (const Mapping& m : snap.mappings) {
      if (s.kernel_mmaps.count({m.start, m.path})) continue;
      const std::vector<uint8_t> id = file_build_id(m.path);
      out.append(writer, kMmap, snap.ticks, snap.pid, snap.pid, m.start, m.length, m.pgoff, m.prot, m.flags,
                 Str(m.path.data(), m.path.size()), Blob{id.data(), static_cast<uint32_t>(id.size())});
    }
  }
  std::erase_if(s.snapshots, due);
  if (s.snapshots.empty()) {
    s.kernel_mmaps.clear();
    s.convert.set_on_mmap(nullptr);
  }
}

// The kernel functions the recording saw, named from the kallsyms read
// while it ran or kept from an earlier recording (this machine's: a report
// elsewhere could not). Where an address lies outside what that text
// covers (a module loaded since, a BPF program, a trampoline) it is read
// again (kallsyms_stale_for); a fresh text is kept for the next recording.
void KernelSession::write_kernel_symbols(TraceWriter& writer, const TickConversion& clock) {
  const std::unordered_set<uint64_t>& seen = state_->convert.kernel_addresses();
  if (seen.empty() || !state_->session_stream) return;
  const std::vector<uint64_t> addresses(seen.begin(), seen.end());
  KallsymsText kallsyms = state_->kallsyms.valid() ? state_->kallsyms.get() : read_kallsyms_text();
  if (kallsyms_stale_for(kallsyms, addresses)) kallsyms = read_kallsyms_text();
  if (!kallsyms.from_cache) (void)store_kallsyms_cache(state_->kallsyms_cache, kallsyms);
  const uint64_t at = clock.ticks(monotonic_ns());
  for (const KernelSymbol& k : kernel_symbols_holding(kallsyms.symbols, addresses))
    state_->session_stream->append(writer, kKernelSymbol, at, k.address, Str(k.name.data(), k.name.size()),
                                   Str(k.module.data(), k.module.size()));
}

void KernelSession::flush(TraceWriter& writer) {
  if (!state_) return;
  for (CpuRing& c : state_->cpus)
    if (c.stream) c.stream->flush(writer);
  if (state_->session_stream) state_->session_stream->flush(writer);
}

void KernelSession::end(TraceWriter& writer, const TickConversion& clock) {
  if (!state_) return;
  // Off first, so the last drain is the last word: everything held goes.
  for (int fd : state_->fds) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  drain_up_to(writer, clock, kEveryRecord, monotonic_ns());
  write_kernel_symbols(writer, clock);
  for (CpuRing& c : state_->cpus)
    if (c.stream) c.stream->end(writer);
  if (state_->session_stream) state_->session_stream->end(writer);
}

KernelTotals KernelSession::totals() const {
  KernelTotals t;
  if (!state_) return t;
  for (const CpuRing& c : state_->cpus) {
    if (!c.stream) continue;
    t.records += c.stream->records();
    t.lost += c.stream->lost();
  }
  if (state_->session_stream) t.records += state_->session_stream->records();
  t.corrupt = state_->convert.corrupt();
  for (const CpuRing& c : state_->cpus)
    if (c.ring) t.corrupt += c.ring->corrupt();
  return t;
}

}  // namespace spoor::kernelsrc
