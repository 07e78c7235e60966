// The recorder: runs the program with the shim and $SPOOR_SOCKET in its
// environment, gives each process of the tree that asks a region of its own
// (process_server.h, region.h), and drains every region into one trace
// file until the whole tree has ended.
#include "record.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "../program_image.h"
#include "cgroup_memory.h"
#include "drain_pace.h"
#include "own_stream.h"
#include "packing_budget.h"
#include "process_tree.h"
#include "process_server.h"
#include "provider_spec.h"
#include "recorder_wake.h"
#include "region.h"
#include "ring_budget.h"
#include "rule_cache_file.h"
#include "spoor/drain.h"
#include "spoor/host/clock.h"
#include "spoor/host/enable_spec.h"
#include "spoor/host/file_sink.h"
#include "spoor/kernelsrc/kernel_events.h"
#include "spoor/kernelsrc/kernel_session.h"
#include "spoor/trace_writer.h"

extern char** environ;

namespace spoor::record {
namespace {

using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

bool exists(const std::string& path) { return !path.empty() && access(path.c_str(), R_OK) == 0; }

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string describe_status(int status, int* shell_status) {
  if (WIFEXITED(status)) {
    *shell_status = WEXITSTATUS(status);
    return "exited with code " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    *shell_status = 128 + sig;
    const char* name = strsignal(sig);
    return "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")" +
           (WCOREDUMP(status) ? ", core dumped" : "");
  }
  *shell_status = 1;
  return "ended with status " + std::to_string(status);
}

// One traced process: its region and its streams in the file.
struct Traced {
  uint32_t pid = 0;
  uint64_t start_time = 0;
  uint32_t first_stream = 0;
  uint32_t exec_count = 0;
  int open_images = 0;       // connections open (0 or 1, briefly 2 across an exec)
  bool described = false;    // STREAM blocks written
  bool finished = false;     // drained for the last time, region released
  std::unique_ptr<Region> region;
};

std::atomic<bool> g_stop_waiting{false};

// The program's pid until it is reaped (then 0: the number may be reused).
std::atomic<pid_t> g_program_pid{0};

// SIGTERM and SIGHUP sent to spoor record alone (timeout, kill, a closing
// terminal) are the program's: passed on, and the recorder goes on until
// the program ends, then finishes the file, as after Ctrl-C.
void pass_to_program(int sig) {
  g_stop_waiting.store(true);
  wake_recorder();
  const pid_t pid = g_program_pid.load();
  if (pid > 0) kill(pid, sig);  // async-signal-safe
}

// SIGINT and SIGQUIT: from the terminal (Ctrl-C, Ctrl-\: the tty sends
// them to the whole foreground process group, si_code SI_KERNEL) they
// reach the program by themselves, and the recorder only stops waiting
// for what the program left running. Sent to spoor record alone (kill,
// pkill, timeout -s INT: SI_USER), they are passed on as SIGTERM is, or
// the program would never hear of them and the recording never end.
void on_interrupt(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_KERNEL) {
    g_stop_waiting.store(true);
    wake_recorder();
  } else {
    pass_to_program(sig);
  }
}

// Attached to processes it did not start, spoor record stops at SIGINT,
// SIGTERM or SIGHUP (Ctrl-C, timeout, a closing terminal) and leaves them
// running: they are not its to signal.
std::atomic<bool> g_stop_recording{false};
void stop_recording(int) { g_stop_recording.store(true); }

// A trace that outgrows the file size limit (`ulimit -f`) fails its write
// with EFBIG, reported as any write error, instead of SIGXFSZ killing the
// recorder while the program runs on. The program starts with the
// disposition spoor was given.
class FileSizeSignalIgnored {
 public:
  FileSizeSignalIgnored() {
    struct sigaction ignore{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, &given_);
  }
  ~FileSizeSignalIgnored() { restore(); }
  FileSizeSignalIgnored(const FileSizeSignalIgnored&) = delete;
  FileSizeSignalIgnored& operator=(const FileSizeSignalIgnored&) = delete;
  void restore() const { sigaction(SIGXFSZ, &given_, nullptr); }

 private:
  struct sigaction given_{};
};

// The recorder holds descriptors for every traced process alive at once
// (its region's memfd and its connection) besides the kernel's events:
// under `ulimit -Sn 24` the processes a shell loop started past the
// eighth went untraced ("Too many open files"), and Debian's default soft
// limit of 1,024 is within reach of a wide parallel build. So the
// recorder raises its soft limit to the hard one while it runs, and the
// program gets back the limit it was given (restore(), in the child
// before its exec): what the program can open, and the shim's choice of
// numbers below its limit, are what they are untraced.
class DescriptorLimitRaised {
 public:
  DescriptorLimitRaised() {
    if (getrlimit(RLIMIT_NOFILE, &given_) != 0 || given_.rlim_cur >= given_.rlim_max) return;
    const rlimit raised{given_.rlim_max, given_.rlim_max};
    raised_ = setrlimit(RLIMIT_NOFILE, &raised) == 0;
  }
  ~DescriptorLimitRaised() { restore(); }
  DescriptorLimitRaised(const DescriptorLimitRaised&) = delete;
  DescriptorLimitRaised& operator=(const DescriptorLimitRaised&) = delete;
  // Async-signal-safe.
  void restore() const {
    if (raised_) setrlimit(RLIMIT_NOFILE, &given_);
  }

 private:
  rlimit given_{};
  bool raised_ = false;
};

// The drain thread (the recorder's main thread, once the program is
// started) runs at nice -5 where it may: a program whose threads keep
// every CPU busy otherwise shares them evenly with the drain, and on a
// machine where the drain's copies are slow (fresh pages dear) a 16 MiB
// ring filled before its turn came. With two threads of malloc_heavy on
// two CPUs, 11 runs in 12 lost events at nice 0 and 2 in 12 at -5,
// interleaved (bench/RESULTS.md). The drain's CPU time is the same; it is only
// served first. The program, started before this, keeps its own nice
// value, and the packing threads theirs: packing late costs memory, not
// events. Unprivileged users may not raise a priority (without
// RLIMIT_NICE): the drain then stays at the nice value it had.
constexpr int kDrainNice = -5;

void favour_the_drain() {
  const int saved = errno;
  // The thread's own nice value: on Linux it is per thread.
  const int now = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  if (now > kDrainNice) (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kDrainNice);
  errno = saved;
}

// A process attached to, as /proc shows it: read as soon as its events
// are open, before the file is made, so that an exec right after the
// attach (one the kernel's records show) cannot lend its command line to
// the image the recording began in.
struct AttachedProcess {
  pid_t pid = 0;
  uint32_t ppid = 0;
  std::string comm, cmdline;
};
AttachedProcess read_attached(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  AttachedProcess p;
  p.pid = pid;
  p.ppid = proc_stat(static_cast<uint32_t>(pid)).ppid;
  std::getline(std::ifstream(dir + "/comm"), p.comm);
  std::ifstream in(dir + "/cmdline", std::ios::binary);
  p.cmdline.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (!p.cmdline.empty() && p.cmdline.back() == '\0') p.cmdline.pop_back();
  return p;
}

// The soft address-space limit (ulimit -v) in bytes, UINT64_MAX for none:
// the program inherits it from the recorder.
uint64_t address_space_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return static_cast<uint64_t>(limit.rlim_cur);
}

class Recorder {
 public:
  // The packing is sized for the memory limit of the recorder's cgroup,
  // which the program shares (packing_budget.h), and the rings, unless
  // --buffer-size gave them, for it and the address-space limit
  // (ring_budget.h).
  Recorder(const RecordOptions& options, uint32_t cpus, kernelsrc::KernelSession& kernel)
      : options_(options),
        kernel_(kernel),
        memory_limit_(cgroup_memory_limit()),
        address_limit_(address_space_limit()),
        packing_(packing_within_memory(memory_limit_, cpus)),
        rings_(options.buffer_size_given ? DefaultRings{options.buffer_bytes_per_cpu, RingLimit::none}
                                         : default_rings(address_limit_, memory_limit_, cpus,
                                                         options.buffer_bytes_per_cpu, 2 * size_t{options.packet_bytes})) {
    layout_.cpus = cpus;
    layout_.buffer_bytes_per_cpu = rings_.bytes_per_cpu;
    layout_.packet_bytes = options.packet_bytes;
  }

  Clock::time_point program_ended() const { return program_ended_; }

  bool start(std::string* error) {
    // Registered before the recorder's process is described, so its
    // metadata names them; the kernel streams use them only if opened.
    if (options_.kernel.any()) kernelsrc::register_kernel_events();
    if (!server_.listen(error) || !own_.start(layout_.cpus, error)) return false;
    // The clock's frequency for the time grain (open_file), measured over
    // the program's start.
    first_clock_sample_ = host::sample_clock();
    // Before any process is handed the store (a read and one write of a
    // few hundred KiB at most).
    if (keeps_rules()) (void)load_rule_cache(server_.rule_store_fd(), options_.rule_cache);
    return true;
  }
  const std::string& socket_name() const { return server_.name(); }
  // Unwind rules kept between recordings (rule_cache_file.h): only the
  // shim's processes use them.
  bool keeps_rules() const { return !options_.rule_cache.empty() && !options_.no_preload; }

  bool open_file(const std::string& path, std::string* error) {
    if (!file_.open(path, error)) {
      // The name was spoor's choice, in a directory the user may not have
      // meant to write to (a read-only one, a tmpfs that is full).
      if (options_.output_path.empty()) *error += " (the trace goes to the current directory unless -o FILE says where)";
      return false;
    }
    path_ = path;
    file_.compress({.enabled = options_.compress,
                    .run_bytes = packing_.run_bytes,
                    .backlog_limit = packing_.backlog_limit,
                    .threads = packing_.threads});
    writer_ = std::make_unique<TraceWriter>(file_.sink());
    writer_->file_header();
    clock_start_ = host::sample_clock();
    // Before any region is made: every process rounds its times alike.
    layout_.time_grain_ticks = time_grain_ticks(options_.time_resolution_ns,
                                                host::clock_block(first_clock_sample_, clock_start_).freq_millihz);
    writer_->clock(clock_block(host::sample_clock()));
    own_.describe(*writer_, 0);
    next_stream_ = layout_.cpus;
    if (kernel_.opened()) {
      next_stream_ += kernel_.describe(*writer_, next_stream_, static_cast<uint32_t>(getpid()));
    }
    return true;
  }

  // Runs until the program and every traced process it started have ended
  // (or, once the program has ended, the user stops the wait). `wake` ends
  // the poll's waits early (recorder_wake.h).
  int run(pid_t root, const RecorderWake& wake) {
    root_ = static_cast<uint32_t>(root);
    favour_the_drain();
    auto last_flush = Clock::now(), last_check = Clock::now(), root_end = Clock::time_point{};
    bool told_waiting = false;
    int wait_ms = 1;
    for (;;) {
      bool busy = false;
      if (server_.poll(wait_ms, [&](uint32_t pid, uint32_t) { busy = true; return hello(pid); },
                       [&](uint32_t pid) { busy = true; closed(pid); }, wake.fd()))
        wake.clear();
      reap();
      const uint64_t drained_before = totals_.events + totals_.lost;
      drain_all(false);
      tell_write_failure();
      busy = busy || totals_.events + totals_.lost != drained_before;
      wait_ms = kernel_.opened() ? 1 : next_poll_wait_ms(wait_ms, busy, images_open());
      const auto now = Clock::now();
      if (now - last_flush >= std::chrono::milliseconds(250)) {
        for (auto& t : traced_)
          if (!t->finished) flush_ring(t->region->ring());
        flush_ring(own_.ring());
        kernel_.flush(*writer_);
        last_flush = now;
      }
      // At once when a process may just have ended (a connection closed, a
      // child was reaped): the recording's last wait is for its last
      // process. Otherwise every 20 ms, for processes that end unseen (a
      // traced grandchild reaped by its own parent).
      if (maybe_ended_ || now - last_check >= std::chrono::milliseconds(20)) {
        maybe_ended_ = false;
        finish_ended_processes(false);
        last_check = now;
      }
      if (root_done_) {
        if (root_end == Clock::time_point{}) {
          root_end = program_ended_ = now;
          // The program's CPUs are free: what waits is packed on all of them.
          file_.pack_threads(layout_.cpus);
        }
        if (live_processes() == 0 && !has_children()) break;
        if (g_stop_waiting.load()) break;
        if (!told_waiting && now - root_end >= std::chrono::seconds(2)) {
          std::fprintf(stderr,
                       "spoor record: the program ended; waiting for the processes it left running "
                       "(Ctrl-C to stop waiting)\n");
          told_waiting = true;
        }
      }
    }
    return root_status_;
  }

  // An attached process's PROCESS block (read_attached), as a traced
  // process announces itself.
  void describe_attached(const AttachedProcess& p) {
    writer_->process(static_cast<uint32_t>(p.pid), p.ppid, p.comm.c_str(), p.cmdline.data(), p.cmdline.size());
  }

  // Attached (spoor record --pid): drains the kernel's rings until every
  // process attached to has ended, `seconds` have passed (0: no limit), or
  // a signal stops the recording. Returns how many of them ended.
  size_t run_attached(const std::vector<pid_t>& pids, double seconds) {
    favour_the_drain();
    std::vector<uint64_t> start_times;
    for (const pid_t pid : pids) start_times.push_back(proc_stat(static_cast<uint32_t>(pid)).start_time);
    // Not ended, nor replaced by a new process with its pid.
    const auto still_running = [&](size_t i) {
      const ProcStat st = proc_stat(static_cast<uint32_t>(pids[i]));
      return st.running && st.start_time == start_times[i];
    };
    const auto start = Clock::now();
    auto last_flush = start, last_check = start;
    size_t ended = 0;
    for (;;) {
      server_.poll(1, [](uint32_t, uint32_t) { return Reply{}; }, [](uint32_t) {});
      drain_all(false);
      tell_write_failure();
      const auto now = Clock::now();
      if (now - last_flush >= std::chrono::milliseconds(250)) {
        flush_ring(own_.ring());
        kernel_.flush(*writer_);
        last_flush = now;
      }
      // Every 20 ms, as for the processes a recording starts: /proc reads
      // each drain would cost more than the drain.
      if (now - last_check >= std::chrono::milliseconds(20)) {
        ended = 0;
        for (size_t i = 0; i < pids.size(); ++i) ended += !still_running(i);
        last_check = now;
      }
      if (ended == pids.size() || g_stop_recording.load()) break;
      if (seconds > 0 && std::chrono::duration<double>(now - start).count() >= seconds) break;
    }
    program_ended_ = Clock::now();
    for (size_t i = 0; i < pids.size(); ++i)
      if (still_running(i)) attached_running_.push_back(pids[i]);
    return pids.size() - attached_running_.size();
  }

  // Drains everything that was committed, ends every stream, closes the
  // file. A write that failed on the way is in result->write_error.
  void finish(RecordResult* result) {
    finish_ended_processes(true);
    note_running();
    // A cache: a recording whose rules cannot be kept is no worse for it.
    if (keeps_rules()) (void)save_rule_cache(server_.rule_store_fd(), options_.rule_cache);
    flush_ring(own_.ring());
    drain_ring(own_.ring(), *writer_, true, totals_, 0);
    const host::ClockSample last = host::sample_clock();
    kernel_.end(*writer_, {host::clock_block(clock_start_, last)});
    writer_->clock(clock_block(last));
    end_streams(own_.ring(), *writer_, totals_, nullptr, 0);
    const kernelsrc::KernelTotals k = kernel_.totals();
    result->kernel_opened = kernel_.opened();
    result->kernel_records = k.records;
    result->kernel_lost = k.lost;
    totals_.events += k.records;
    totals_.lost += k.lost;
    result->events = totals_.events;
    result->lost = totals_.lost;
    result->handler_calls_lost = handler_calls_lost_;
    result->pre_attach_calls_lost = pre_attach_calls_lost_;
    result->abandoned_bytes = totals_.abandoned_bytes;
    result->processes = static_cast<uint32_t>(traced_.size() - never_attached_.size());
    result->never_attached = never_attached_;
    server_.take_queued_notes();
    result->untraceable = server_.untraceable();
    result->own_allocators = server_.own_allocators();
    result->samples_off = server_.samples_off();
    result->perf_maps = perf_maps_;
    for (auto& t : traced_) result->preload_attached |= t->pid == root_;
    result->region_error = region_error_;
    result->memory_limit = memory_limit_;
    result->address_limit = address_limit_;
    result->packing = packing_;
    result->ring_bytes_per_cpu = rings_.bytes_per_cpu;
    result->rings_limited_by = rings_.limited_by;
    result->refused_rings = refused_rings_;
    if (!file_.close()) result->write_error = write_failure();
    result->file_bytes = file_.bytes_written();
    result->compression = file_.compression_stats();
    result->compression_problem = file_.compression_problem();
  }

 private:
  std::string write_failure() const {
    return (path_ == "-" ? std::string("writing the trace to standard output") : "writing '" + path_ + "'") +
           " failed: " + std::strerror(file_.error_number());
  }
  // A failed write ends the file, not the recording: the program runs on
  // and its rings are still drained (full rings would only cost it lost
  // events). Said when it happens: a long recording would otherwise go on
  // writing nothing until the program ends.
  //
  // Its processes stop tracing then: events no one will read would only
  // slow them down. Each region's providers are switched off, and a
  // process that starts or execs from then on is told it is not traced.
  void tell_write_failure() {
    if (told_write_failure_ || file_.error_number() == 0) return;
    told_write_failure_ = true;
    tracing_off_ = true;
    for (auto& t : traced_)
      if (!t->finished) t->region->switch_tracing_off();
    std::fprintf(stderr,
                 "spoor record: %s; the program runs on, untraced from now on: nothing more reaches the trace\n",
                 write_failure().c_str());
  }

  Reply hello(uint32_t pid) {
    if (tracing_off_) return {};
    Traced* same = nullptr;
    for (auto& t : traced_)
      if (t->pid == pid && !t->finished) same = t.get();
    const ProcStat now = proc_stat(pid);
    if (same != nullptr && same->start_time == now.start_time) {
      // The same process after an exec: its region goes on.
      same->open_images++;
      return {preload::Answer::traced, same->region->fd(), ++same->exec_count, now.ppid};
    }
    if (same != nullptr) finish(*same);  // the pid was reused: the old process is gone
    if (options_.no_follow && pid != root_) return {};
    auto t = std::make_unique<Traced>();
    t->region = std::make_unique<Region>();
    std::string error;
    if (!t->region->create(layout_, &error)) {
      if (region_error_.empty()) {  // said once, and each pid again in the summary
        std::fprintf(stderr, "spoor record: %s; pid %u is not traced\n", error.c_str(), pid);
        region_error_ = error;
      }
      refused_rings_.push_back(pid);
      return {};
    }
    t->pid = pid;
    t->start_time = now.start_time;
    t->first_stream = next_stream_;
    t->open_images = 1;
    next_stream_ += layout_.cpus;
    traced_.push_back(std::move(t));
    return {preload::Answer::traced, traced_.back()->region->fd(), 0, now.ppid};
  }

  void closed(uint32_t pid) {
    maybe_ended_ = true;
    for (auto& t : traced_)
      if (t->pid == pid && !t->finished && t->open_images > 0) t->open_images--;
  }

  // Reaps the program and orphans that re-parented here, recording how
  // each ended.
  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      maybe_ended_ = true;
      own_.process_exited(pid, status);
      if (static_cast<uint32_t>(pid) == root_) {
        g_program_pid.store(0);
        root_status_ = status;
        root_done_ = true;
      }
    }
  }

  // ProcessRunning for the processes of the recording still running as it
  // ends: those a program left and the user stopped waiting for (Ctrl-C),
  // or attached ones --duration or Ctrl-C left, and what they started.
  void note_running() {
    std::vector<pid_t> roots = attached_running_;
    if (roots.empty()) {
      if (!has_children()) return;  // the usual end: every process was reaped
      roots.push_back(getpid());
    }
    for (const pid_t pid : attached_running_) own_.process_running(pid);
    for (const pid_t pid : running_below(roots)) own_.process_running(pid);
  }

  // Children left (running, since reap() took the ended ones).
  static bool has_children() {
    siginfo_t info{};
    return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
  }

  // Whether any traced process still has an image that may write: one
  // whose connection is open (drain_pace.h).
  bool images_open() const {
    for (auto& t : traced_)
      if (!t->finished && t->open_images > 0) return true;
    return false;
  }

  size_t live_processes() const {
    size_t n = 0;
    for (auto& t : traced_) n += !t->finished;
    return n;
  }

  // Metadata first (the blocks the process published), then its streams,
  // then a turn of its packets (drain_ring_turn): every block comes before
  // the first one that needs it. Returns whether a CPU may have more.
  bool drain_turn(Traced& t, bool final) {
    t.region->copy_new_metadata(file_.sink());
    if (!t.described) {
      if (t.region->header().attached_pid.load(std::memory_order_acquire) == 0) return false;
      for (uint32_t cpu = 0; cpu < layout_.cpus; ++cpu) writer_->stream(t.first_stream + cpu, t.pid, cpu);
      t.described = true;
    }
    return drain_ring_turn(t.region->ring(), *writer_, final, totals_, [] {}, t.first_stream);
  }

  void drain(Traced& t, bool final) {
    while (drain_turn(t, final)) {
    }
    if (!final) t.region->populate_ahead();
  }

  // Every process's rings and the recorder's own, in turns: a process that
  // keeps one ring busy does not keep the drain from the others.
  void drain_all(bool final) {
    bool more = true;
    int turns = 0;
    while (more) {
      more = false;
      for (auto& t : traced_)
        if (!t->finished && drain_turn(*t, final)) more = true;
      if (drain_ring_turn(own_.ring(), *writer_, final, totals_, [] {}, 0)) more = true;
      ++turns;
    }
    if (!final && drain_fell_behind(turns)) file_.make_spares_ahead();
    if (!final)
      for (auto& t : traced_)
        if (!t->finished) t->region->populate_ahead();
    // The kernel's times are CLOCK_MONOTONIC: into ticks with the
    // calibration so far (start to now; its error is the samples' tens of
    // ns, not a drift, since every record is older than `now`).
    if (kernel_.opened()) kernel_.drain(*writer_, {host::clock_block(clock_start_, host::sample_clock())});
    file_.flush();
  }

  // A process whose images are all gone and that no longer runs: take the
  // last of what it committed, end its streams, release its region.
  void finish(Traced& t) {
    flush_ring(t.region->ring());
    drain(t, true);
    handler_calls_lost_ += t.region->header().handler_calls_lost.load(std::memory_order_relaxed);
    pre_attach_calls_lost_ += t.region->header().pre_attach_calls_lost.load(std::memory_order_relaxed);
    if (t.described) end_streams(t.region->ring(), *writer_, totals_, nullptr, t.first_stream);
    else never_attached_.push_back(t.pid);
    t.region.reset();
    t.finished = true;
    // Its runtime has written all it will (a JVM writes the map at exit).
    keep_perf_map(*writer_, options_.perf_map_dir, t.pid, clock_start_.realtime_ns, perf_maps_);
  }

  void finish_ended_processes(bool all) {
    for (auto& t : traced_) {
      if (t->finished) continue;
      if (all) {
        finish(*t);
        continue;
      }
      const ProcStat now = proc_stat(t->pid);
      if ((t->open_images == 0 && !now.running) || now.start_time != t->start_time) finish(*t);
    }
  }

  const RecordOptions& options_;
  kernelsrc::KernelSession& kernel_;
  std::vector<pid_t> attached_running_;  // --pid: those still running at the end
  RegionLayout layout_;
  Clock::time_point program_ended_{};
  ProcessServer server_;
  OwnStream own_;
  host::FileSink file_;
  std::unique_ptr<TraceWriter> writer_;
  host::ClockSample clock_start_{};
  host::ClockSample first_clock_sample_{};
  // A CLOCK block from the recording's start to `later`, with the grain
  // the traced processes round their times to.
  format::ClockBlock clock_block(const host::ClockSample& later) const {
    format::ClockBlock c = host::clock_block(clock_start_, later);
    c.time_grain_ticks = static_cast<uint32_t>(layout_.time_grain_ticks);
    return c;
  }
  std::vector<std::unique_ptr<Traced>> traced_;
  uint32_t next_stream_ = 0;
  uint32_t root_ = 0;
  bool root_done_ = false;
  bool maybe_ended_ = false;  // a connection closed or a child was reaped since the last check
  int root_status_ = 0;
  uint64_t memory_limit_;     // of the recorder's cgroup, UINT64_MAX for none
  uint64_t address_limit_;    // the recorder's soft RLIMIT_AS, UINT64_MAX for none
  PackingBudget packing_;     // the packing's sizes, made to fit it
  DefaultRings rings_;        // each process's rings, made to fit both
  std::string region_error_;  // the first process's that could not be given rings
  std::vector<uint32_t> refused_rings_;  // every process that could not
  bool told_write_failure_ = false;
  bool tracing_off_ = false;  // after a failed write: no process is traced any more
  std::vector<uint32_t> never_attached_;  // finished without ever taking their rings
  std::string path_;  // the trace's, "-" for standard output
  DrainTotals totals_;
  uint64_t handler_calls_lost_ = 0;  // from the regions of the processes finished
  uint64_t pre_attach_calls_lost_ = 0;
  PerfMapsKept perf_maps_;
};

// The recorder's buffers are megabytes each (runs of blocks waiting to be
// packed, the packer's scratch), allocated and freed over and over. By
// default glibc maps each one afresh and unmaps it when freed, so every
// reuse faults its pages in again (zeroing, memory cgroup charge): ~30,000
// page faults and 30-50 ms of the recorder's CPU for a 50 MiB trace here,
// taken from the CPU the program runs beside. Served from the heap and
// never trimmed, freed buffers are reused as they are; the recorder's peak
// memory is the same.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest on 64-bit
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// Under an address-space limit (ulimit -v), one malloc arena for all the
// recorder's threads. glibc gives each thread that allocates an arena of
// its own, reserving 64 MiB of address space for it (128 MiB while it
// aligns it): under `ulimit -v 100000` the recorder's drain and packing
// threads took it to a peak of 92.7 MB of its 97.7, and the next process's
// 3 MiB region could not be mapped, so that process ran untraced (1 run in
// 40 of Record.UnderAnAddressSpaceLimitTheDefaultRingsAreMadeToFit). With
// one arena its peak is 33.4 MB. Without a limit the arenas stay, so that
// the threads do not wait on one lock.
void one_arena_within_address_limit() {
  if (address_space_limit() != UINT64_MAX) mallopt(M_ARENA_MAX, 1);
}

// The path a shell would put in `$_` for `program`: as given when it holds
// a slash, else the first executable of that name in $PATH.
std::string shell_command_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/bin:/usr/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    const std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return program;
    dirs.remove_prefix(colon + 1);
  }
}

// The program's environment: the caller's, with the shim preloaded and the
// recorder's settings. The shim takes those out again once it has read them
// (shim/exec_env.h), so the program sees the variables in the order given.
// `$_`, when the caller's shell set it to spoor's own path (bash does),
// names the program, as that shell would have for the program run alone.
std::vector<std::string> program_environment(const RecordOptions& options, const std::string& preload,
                                             const std::string& socket_name) {
  std::vector<std::string> env;
  if (preload.empty()) {  // --no-preload: the program's environment as it is
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    return env;
  }
  // Only the variables set below are replaced; the program keeps every
  // other one, SPOOR_* of its own included.
  bool preload_set = false;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe", error);
  for (char** e = environ; *e; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("LD_PRELOAD=")) {
      const std::string_view theirs = kv.substr(sizeof "LD_PRELOAD=" - 1);
      env.push_back("LD_PRELOAD=" + preload + (theirs.empty() ? "" : ":") + std::string(theirs));
      preload_set = true;
      continue;
    }
    if (kv.starts_with("_=") && !self.empty() &&
        std::filesystem::equivalent(std::string(kv.substr(2)), self, error)) {
      env.push_back("_=" + shell_command_path(options.command[0]));
      continue;
    }
    bool replaced = false;
    for (std::string_view r : preload::kTracingVariables) replaced |= kv.starts_with(r);
    if (!replaced) env.emplace_back(kv);
  }
  if (!preload_set) env.push_back("LD_PRELOAD=" + preload);
  env.push_back(std::string(preload::kSocketEnv) + "=" + socket_name);
  env.push_back("SPOOR_PROVIDERS=" + options.providers);
  env.push_back("SPOOR_STACK_DEPTH=" + std::to_string(options.stack_depth));
  env.push_back("SPOOR_SAMPLE_HZ=" + std::to_string(options.sample_hz));
  env.push_back("SPOOR_SAMPLE_CLOCK=" + options.sample_clock);
  env.push_back(std::string("SPOOR_WAIT_WHEN_FULL=") + (options.wait_when_full ? "1" : "0"));
  return env;
}

}  // namespace

std::string find_preload_library() {
  if (const char* env = std::getenv("SPOOR_PRELOAD_LIB"); env && *env) return env;
  if (exists(SPOOR_BUILD_PRELOAD_PATH)) return SPOOR_BUILD_PRELOAD_PATH;
  if (exists(SPOOR_INSTALL_PRELOAD_PATH)) return SPOOR_INSTALL_PRELOAD_PATH;
  return "";
}

namespace {

// Every CPU the machine may bring online: rings for each.
uint32_t configured_cpus() {
  const long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  return ncpu > 0 ? static_cast<uint32_t>(ncpu) : 1;
}

// The kernel sources `options` ask for.
kernelsrc::PlanOptions kernel_plan(const RecordOptions& options) {
  kernelsrc::PlanOptions plan;
  plan.request = options.kernel;
  plan.sample_hz = options.sample_hz;
  plan.stack_bytes = options.kernel_stack_bytes;
  // Beside the unwind rules' cache, and off with it (--no-rule-cache).
  if (!options.rule_cache.empty())
    plan.kallsyms_cache = std::filesystem::path(options.rule_cache).parent_path() / "kallsyms";
  return plan;
}

// The events an attach opens follow what the processes start from then
// on; the children they had started already are not theirs. Said, with
// the --pid that would take them too, as a user attaching to a server's
// master process expects its workers. `children`: running_below(pids),
// read before the attach (a child started after it is followed).
void say_unfollowed_children(const std::vector<pid_t>& pids, std::vector<pid_t> children) {
  std::erase_if(children, [&](pid_t pid) { return std::find(pids.begin(), pids.end(), pid) != pids.end(); });
  if (children.empty()) return;
  const bool one = children.size() == 1;
  const std::string by = pids.size() == 1 ? "pid " + std::to_string(pids.front()) : "them";
  std::fprintf(stderr, "spoor record: %zu process%s started before the recording by %s %s not recorded (only what "
               "starts from now on is)", children.size(), one ? "" : "es", by.c_str(), one ? "is" : "are");
  // A whole machine's tree (--pid 1) would not fit on a line to copy.
  constexpr size_t kMostListed = 16;
  std::string all;
  for (const pid_t pid : pids) all += (all.empty() ? "" : ",") + std::to_string(pid);
  for (size_t i = 0; i < children.size() && i < kMostListed; ++i) all += "," + std::to_string(children[i]);
  if (children.size() <= kMostListed)
    std::fprintf(stderr, "; to record %s too: --pid %s\n", one ? "it" : "them", all.c_str());
  else
    std::fprintf(stderr, "; --pid takes them in a list (%s,... and %zu more)\n", all.c_str(),
                 children.size() - kMostListed);
}

// spoor record --pid: the kernel's sources for processes already running.
bool run_attach(const RecordOptions& options, RecordResult* result, std::string* error) {
  keep_freed_memory();
  one_arena_within_address_limit();
  const FileSizeSignalIgnored file_size_signal;
  const DescriptorLimitRaised descriptor_limit;  // a perf event per thread and CPU
  const uint32_t cpus = configured_cpus();
  kernelsrc::KernelSession kernel;
  Recorder recorder(options, cpus, kernel);
  if (!recorder.start(error)) return false;
  const kernelsrc::PlanOptions plan = kernel_plan(options);
  // The mappings are read once the events are on (the kernel reports any
  // made after that), and stamped before: the samples that come first
  // find their modules.
  const auto started = Clock::now();
  const uint64_t before_open = spoor_port_ticks();
  const std::vector<pid_t> children_before = running_below(options.attach_pids);
  if (!kernel.attach(plan, options.attach_pids, cpus, error)) return false;
  for (const std::string& m : kernel.messages()) std::fprintf(stderr, "spoor record: %s\n", m.c_str());
  std::vector<AttachedProcess> attached;
  for (const pid_t pid : options.attach_pids) {
    kernel.snapshot_maps(pid, before_open, true);
    attached.push_back(read_attached(pid));
  }
  say_unfollowed_children(options.attach_pids, children_before);
  result->pid = options.attach_pids.front();
  result->output_path = options.output_path.empty()
                            ? "spoor-pid-" + std::to_string(options.attach_pids.front()) + ".spoor"
                            : options.output_path;
  if (!recorder.open_file(result->output_path, error)) return false;
  for (const AttachedProcess& p : attached) recorder.describe_attached(p);
  if (options.output_path == "-") signal(SIGPIPE, SIG_IGN);
  struct sigaction stop{}, old_int{}, old_term{}, old_hup{};
  stop.sa_handler = stop_recording;
  stop.sa_flags = SA_RESTART;
  g_stop_recording.store(false);
  sigaction(SIGINT, &stop, &old_int);
  sigaction(SIGTERM, &stop, &old_term);
  sigaction(SIGHUP, &stop, &old_hup);
  const double drain_cpu_start = thread_cpu_seconds();
  const size_t ended = recorder.run_attached(options.attach_pids, options.duration_seconds);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  recorder.finish(result);
  kernel.close_events();
  result->drain_cpu_seconds = thread_cpu_seconds() - drain_cpu_start;
  result->attached_ended = ended;
  result->how_it_ended = ended == options.attach_pids.size() ? ""
                         : g_stop_recording.load()             ? "still running when the recording was stopped"
                                                               : "still running at the end of --duration";
  result->seconds = std::chrono::duration<double>(Clock::now() - started).count();
  result->program_seconds = std::chrono::duration<double>(recorder.program_ended() - started).count();
  return true;
}

}  // namespace

bool run_record(const RecordOptions& given, RecordResult* result, std::string* error) {
  if (!given.attach_pids.empty()) return run_attach(given, result, error);
  if (given.command.empty()) {
    *error = "no command to record";
    return false;
  }
  const std::optional<std::string> providers = shim_provider_spec(given.providers, error);
  if (!providers) return false;
  RecordOptions options = given;
  options.providers = *providers;
  const std::string preload = options.no_preload ? "" : find_preload_library();
  if (preload.empty() && !options.no_preload) {
    *error = "cannot find libspoor-preload.so (set SPOOR_PRELOAD_LIB to its path)";
    return false;
  }
  // A sanitizer build of the shim (cmake --preset asan) needs its runtime
  // loaded first, which no uninstrumented program does: preloaded, it
  // crashed every program, /bin/true included.
  if (const char* sanitizer = preload.empty() ? "" : preload::sanitizer_runtime_needed(preload.c_str());
      *sanitizer != '\0') {
    *error = preload + " is a sanitizer build (" + sanitizer +
             "): its runtime must load before it, so it would crash any program not built with that "
             "sanitizer; record with a plain build's spoor (cmake --preset release), or set "
             "SPOOR_PRELOAD_LIB to a plain build's shim";
    return false;
  }
  keep_freed_memory();
  one_arena_within_address_limit();
  const FileSizeSignalIgnored file_size_signal;
  const DescriptorLimitRaised descriptor_limit;
  // Before the fork: the program may end before the recorder first polls.
  RecorderWake wake;
  if (!wake.open(error)) return false;
  const uint32_t cpus = configured_cpus();
  kernelsrc::KernelSession kernel;
  Recorder recorder(options, cpus, kernel);
  if (!recorder.start(error)) return false;

  // A sanitizer build starts without the shim: its runtime must load first
  // (program_image.h). It runs as it would alone, untraced.
  const preload::ProgramImage image = preload::examine_program_image(options.command[0].c_str(), true);
  result->program_untraceable = image.why;
  std::vector<std::string> env_strings =
      program_environment(options, image.without_preload ? "" : preload, recorder.socket_name());
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options.command;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Orphans of the tree re-parent to the recorder, which reaps them and
  // records how they ended.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Report exec failures through a close-on-exec pipe: EOF means it ran.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    *error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return false;
  }
  // The child waits for EOF on this pipe before it execs: the kernel's
  // events are opened for it meanwhile, enabled by its exec.
  int go_pipe[2];
  if (pipe2(go_pipe, O_CLOEXEC) != 0) {
    *error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return false;
  }
  const auto started = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("cannot fork: ") + std::strerror(errno);
    return false;
  }
  const bool trace_to_stdout = options.output_path == "-";
  if (pid == 0) {
    close(exec_pipe[0]);
    close(go_pipe[1]);
    // The trace has standard output: what the program prints there goes
    // to standard error, the same bytes in the same order.
    if (trace_to_stdout) dup2(STDERR_FILENO, STDOUT_FILENO);
    char go;
    while (read(go_pipe[0], &go, 1) < 0 && errno == EINTR) {
    }
    file_size_signal.restore();
    descriptor_limit.restore();
    wake.restore_in_child();
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    if (write(exec_pipe[1], &err, sizeof err) < 0) _exit(127);
    _exit(127);
  }
  // A reader that stops early (spoor record -o - ... | head, or one gone
  // before the file header is written) makes the writes fail with EPIPE,
  // reported when it happens and in the summary, instead of killing the
  // recorder while the program runs on. Set after the fork (an ignored
  // signal would stay ignored in the program across its exec), before
  // anything is written.
  if (trace_to_stdout) signal(SIGPIPE, SIG_IGN);
  close(exec_pipe[1]);
  close(go_pipe[0]);
  if (options.kernel.any()) {
    std::string kernel_error;
    if (!kernel.open(kernel_plan(options), pid, cpus, &kernel_error))
      std::fprintf(stderr, "spoor record: %s; recording without them\n", kernel_error.c_str());
    for (const std::string& m : kernel.messages()) std::fprintf(stderr, "spoor record: %s\n", m.c_str());
  }
  close(go_pipe[1]);  // EOF: the child execs
  int exec_errno = 0;
  const bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(exec_pipe[0]);
  if (exec_failed) {
    waitpid(pid, nullptr, 0);
    *error = "cannot run '" + options.command[0] + "': " + std::strerror(exec_errno);
    return false;
  }

  // What the program has mapped by now was mapped before its events were
  // enabled (at the exec): kept for the first drain.
  kernel.snapshot_maps(pid, spoor_port_ticks());
  result->pid = pid;
  result->output_path = options.output_path.empty()
                            ? "spoor-" + base_name(options.command[0]) + "-" + std::to_string(pid) + ".spoor"
                            : options.output_path;
  if (!recorder.open_file(result->output_path, error)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return false;
  }

  // Ctrl-C and Ctrl-\ are for the program (same process group); the
  // recorder keeps going until it ends, then finishes the file. Once the
  // program has ended, Ctrl-C stops waiting for what it left running.
  // SIGTERM and SIGHUP, and SIGINT and SIGQUIT sent to spoor record alone,
  // are passed on to the program (pass_to_program, on_interrupt).
  struct sigaction on_int{}, pass{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  on_int.sa_sigaction = on_interrupt;
  on_int.sa_flags = SA_SIGINFO | SA_RESTART;
  pass.sa_handler = pass_to_program;
  pass.sa_flags = SA_RESTART;
  g_program_pid.store(pid);
  sigaction(SIGINT, &on_int, &old_int);
  sigaction(SIGQUIT, &on_int, &old_quit);
  sigaction(SIGTERM, &pass, &old_term);
  sigaction(SIGHUP, &pass, &old_hup);
  const double drain_cpu_start = thread_cpu_seconds();
  const int status = recorder.run(pid, wake);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  g_program_pid.store(0);

  recorder.finish(result);
  // Last: no process of the recording is waited for after this.
  kernel.close_events();
  result->drain_cpu_seconds = thread_cpu_seconds() - drain_cpu_start;
  result->how_it_ended = describe_status(status, &result->exit_status);
  result->seconds = std::chrono::duration<double>(Clock::now() - started).count();
  result->program_seconds = std::chrono::duration<double>(recorder.program_ended() - started).count();
  return true;
}

}  // namespace spoor::record
