// The hosted session: rings, enable rules, the writer thread, the trace file.
#include "spoor/host/session.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <system_error>
#include <thread>

#include "spoor/control.h"
#include "spoor/drain.h"
#include "spoor/host/clock.h"
#include "spoor/host/enable_spec.h"
#include "spoor/host/file_sink.h"
#include "spoor/registry.h"
#include "spoor/ring.h"
#include "spoor/trace_writer.h"

namespace spoor::host {
namespace {

std::atomic<bool> g_session_running{false};

// A forked child shares the ring's pages (MAP_SHARED) but has no writer
// thread, and its events would read as the parent's: the child writes
// nothing until it starts a session of its own. Its copy of the Session
// object must not be stopped (there is no thread to join); `spoor record`
// follows children with sessions of their own.
void detach_in_child() {
  ring_install(RingView{});
  g_session_running.store(false);
}
[[maybe_unused]] const int g_atfork = pthread_atfork(nullptr, nullptr, detach_in_child);

std::string errno_text(int err) { return std::strerror(err); }

std::string read_proc_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Maps zeroed, page-aligned shared memory (a memfd, so another process could
// map the same pages). Returns MAP_FAILED on error with errno set.
void* map_shared(const char* name, size_t size, int* fd_out) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return MAP_FAILED;
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    close(fd);
    errno = e;
    return MAP_FAILED;
  }
  *fd_out = fd;
  return p;
}

// The control block moves to shared memory once per process and stays there
// (providers keep pointing into it), shared by every later session.
struct SharedControl {
  int fd = -1;
  void* memory = nullptr;
};
SharedControl& shared_control(std::string* error) {
  static SharedControl control;
  static std::once_flag once;
  std::call_once(once, [&] {
    const size_t size = ControlBlock::bytes_for(SPOOR_MAX_PROVIDERS);
    int fd = -1;
    void* p = map_shared("spoor-control", size, &fd);
    if (p == MAP_FAILED) {
      if (error) *error = "cannot create the control block: " + errno_text(errno);
      return;
    }
    relocate_control_block(p, size);
    control.fd = fd;
    control.memory = p;
  });
  return control;
}

}  // namespace

struct Session::Impl {
  SessionOptions options;
  std::mutex rules_mutex;
  std::vector<EnableRule> rules;

  int ring_fd = -1;
  void* ring_memory = nullptr;
  size_t ring_size = 0;
  RingView ring;

  FileSink file;
  TraceWriter writer{file.sink()};
  uint32_t pid = 0;
  ClockSample clock_ref{};
  std::chrono::steady_clock::time_point started;

  std::thread thread;
  std::mutex wake_mutex;
  std::condition_variable wake;  // cuts the writer thread's nap short at stop
  std::atomic<bool> stopping{false};
  bool stopped = false;
  bool write_failed = false;
  int write_errno = 0;
  SessionStats stats;

  // Applies the rules to one provider (registration hook and enable()).
  void apply(Provider& p) {
    const ProviderControl* c = p.control();
    apply_enable_state(*const_cast<ProviderControl*>(c), state_for(rules, p.name(), p.id()));
  }

  void apply_all() {
    std::lock_guard lock(rules_mutex);
    for (uint32_t i = 1; i <= Registry::provider_count(); ++i)
      if (Provider* p = Registry::provider(i)) apply(*p);
  }

  static void on_registered(Provider& p, void* context) {
    auto* self = static_cast<Impl*>(context);
    std::lock_guard lock(self->rules_mutex);
    self->apply(p);
  }

  void note_write(Status s) {
    if (s != Status::ok && !write_failed) {
      write_failed = true;
      write_errno = file.error_number();
    }
  }

  // Drains every closed packet of every CPU. final: the writers are gone,
  // so an uncommitted record ends its packet.
  // Returns true when some packet was busy (a writer mid-event).
  bool drain(bool final) {
    DrainTotals totals;
    // Describe new events before the first packet that may use them.
    drain_ring(ring, writer, final, totals, [this] { note_write(writer.new_metadata(pid)); });
    note_write(totals.status);
    stats.events += totals.events;
    stats.packets += totals.packets;
    // Hand what was drained to the kernel: it survives this process dying.
    if (!file.flush()) note_write(Status::sink_failed);
    return totals.busy;
  }

  void run() {
    auto last_flush = std::chrono::steady_clock::now();
    const auto flush_every = std::chrono::milliseconds(options.flush_interval_ms);
    const auto nap = std::chrono::microseconds(options.drain_interval_us);
    while (!stopping.load(std::memory_order_acquire)) {
      drain(false);
      const auto now = std::chrono::steady_clock::now();
      if (now - last_flush >= flush_every) {
        flush_ring(ring);
        last_flush = now;
      }
      std::unique_lock lock(wake_mutex);
      wake.wait_for(lock, nap, [this] { return stopping.load(std::memory_order_acquire); });
    }
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Session::~Session() { stop(); }

std::unique_ptr<Session> Session::start(const SessionOptions& options, std::string* error) {
  auto fail = [&](std::string msg) -> std::unique_ptr<Session> {
    if (error) *error = std::move(msg);
    return nullptr;
  };
  auto rules = parse_enable_spec(options.providers, error);
  if (!rules) return nullptr;
  if (options.output_path.empty()) return fail("no output file given");
  if (options.packet_bytes < kMinSubbufSize || options.packet_bytes > kMaxSubbufSize ||
      (options.packet_bytes & (options.packet_bytes - 1)) != 0)
    return fail("packet size " + std::to_string(options.packet_bytes) +
                " is not a power of two between 256 bytes and 1 MiB");
  if (options.buffer_bytes_per_cpu < 2ull * options.packet_bytes)
    return fail("buffer size " + std::to_string(options.buffer_bytes_per_cpu) +
                " per CPU is smaller than two packets of " + std::to_string(options.packet_bytes));
  bool expected = false;
  if (!g_session_running.compare_exchange_strong(expected, true))
    return fail("a session is already running in this process");

  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->rules = std::move(*rules);
  auto release_flag = [&](std::string msg) {
    g_session_running.store(false);
    return fail(std::move(msg));
  };

  SharedControl& control = shared_control(error);
  if (control.memory == nullptr) return release_flag(error ? *error : "cannot create the control block");

  uint32_t cpus = options.cpu_count;
  if (cpus == 0) {
    long n = sysconf(_SC_NPROCESSORS_CONF);
    cpus = n > 0 ? static_cast<uint32_t>(n) : 1;
  }
  const uint32_t per_cpu_packets = packets_per_cpu(options.buffer_bytes_per_cpu, options.packet_bytes);
  impl->ring_size = ring_bytes_needed(cpus, options.packet_bytes, per_cpu_packets);
  impl->ring_memory = map_shared("spoor-ring", impl->ring_size, &impl->ring_fd);
  if (impl->ring_memory == MAP_FAILED)
    return release_flag("cannot map " + std::to_string(impl->ring_size) +
                        " bytes of ring buffers: " + errno_text(errno));
  if (Status s = ring_init(impl->ring_memory, impl->ring_size, cpus, options.packet_bytes, &impl->ring);
      s != Status::ok)
    return release_flag(std::string("cannot lay out the ring buffers: ") + status_name(s));

  std::string open_error;
  if (!impl->file.open(options.output_path, &open_error)) return release_flag(open_error);
  impl->file.compress(options.compression);
  impl->pid = static_cast<uint32_t>(getpid());
  impl->started = std::chrono::steady_clock::now();

  // A short calibration now (the file is usable even if the program dies);
  // stop() writes one over the whole session, which readers prefer.
  impl->clock_ref = sample_clock();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const ClockSample early = sample_clock();

  std::string comm = read_proc_file("/proc/self/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  std::string cmdline = read_proc_file("/proc/self/cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();

  TraceWriter& w = impl->writer;
  impl->note_write(w.file_header());
  impl->note_write(w.clock(clock_block(impl->clock_ref, early)));
  impl->note_write(w.process(impl->pid, static_cast<uint32_t>(getppid()), comm.c_str(),
                             cmdline.data(), cmdline.size()));
  for (uint32_t cpu = 0; cpu < cpus; ++cpu) impl->note_write(w.stream(cpu, impl->pid, cpu));
  impl->note_write(w.new_metadata(impl->pid));
  if (!impl->file.flush()) impl->note_write(Status::sink_failed);
  if (impl->write_failed) {
    impl->file.close();
    return release_flag("cannot write '" + options.output_path + "': " + errno_text(impl->write_errno));
  }

  ring_install(impl->ring);
  Registry::set_provider_hook(&Impl::on_registered, impl.get());
  impl->apply_all();
  try {
    impl->thread = std::thread([p = impl.get()] { p->run(); });
  } catch (const std::system_error& e) {
    // No thread to drain with (a cgroup's pids.max, RLIMIT_NPROC): the
    // session ends at once, as stop() ends any, and says why.
    std::unique_ptr<Session>(new Session(std::move(impl)))->stop();
    return fail(std::string("cannot start the session's drain thread: ") + e.code().message());
  }
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

bool Session::enable(std::string_view spec, std::string* error) {
  auto rules = parse_enable_spec(spec, error);
  if (!rules) return false;
  {
    std::lock_guard lock(impl_->rules_mutex);
    impl_->rules = std::move(*rules);
  }
  impl_->apply_all();
  return true;
}

int Session::control_fd() const { return shared_control(nullptr).fd; }

SessionStats Session::stop() {
  Impl& s = *impl_;
  if (s.stopped) return s.stats;
  s.stopped = true;

  // 1. No new events: disable every provider, stop applying rules.
  Registry::set_provider_hook(nullptr, nullptr);
  {
    std::lock_guard lock(s.rules_mutex);
    s.rules.clear();
  }
  s.apply_all();
  // 2. Stop the writer thread, detach the ring.
  {
    std::lock_guard lock(s.wake_mutex);
    s.stopping.store(true, std::memory_order_release);
  }
  s.wake.notify_one();
  if (s.thread.joinable()) s.thread.join();  // not when it never started
  ring_install(RingView{});
  // 3. Close every open packet and drain. Writers that passed the enable
  //    check before step 1 finish within nanoseconds; give them up to 100 ms
  //    before treating what they reserved as abandoned.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  for (;;) {
    flush_ring(s.ring);
    const bool busy = s.drain(false);
    if (!busy) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      s.drain(true);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // 4. The whole-session clock calibration, then each stream's end with its
  //    lost count: STREAM_END blocks close the file, so a file cut anywhere
  //    leaves at least one stream without its end, and readers can tell.
  s.note_write(s.writer.clock(clock_block(s.clock_ref, sample_clock())));
  s.stats.lost_per_cpu.assign(s.ring.cpu_count, 0);
  DrainTotals ends;
  end_streams(s.ring, s.writer, ends, s.stats.lost_per_cpu.data());
  s.note_write(ends.status);
  s.stats.lost = ends.lost;
  s.stats.abandoned_bytes = ends.abandoned_bytes;
  if (!s.file.close()) s.note_write(Status::sink_failed);
  s.stats.bytes = s.file.bytes_written();
  s.stats.compression = s.file.compression_stats();
  if (s.write_failed)
    s.stats.write_error = "writing '" + s.options.output_path + "' failed: " + errno_text(s.write_errno);
  s.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count();
  // The ring stays mapped: a writer that loaded the old view just before the
  // detach may still store into it. Its pages go back to the kernel now (a
  // late store just faults in a fresh zero page); the address range is kept.
  fallocate(s.ring_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
            static_cast<off_t>(s.ring_size));
  close(s.ring_fd);
  g_session_running.store(false);
  return s.stats;
}

}  // namespace spoor::host
