// Joins spoor record when libspoor-preload.so loads: registers the shim's
// providers and events, asks the recorder for this process's region
// (recorder_link.h), maps it, installs its rings, moves the control block
// into it, enables providers per SPOOR_PROVIDERS, and publishes their
// metadata. A fork child does the same for itself, so every process of the
// tree has its own streams.
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../shared_region.h"
#include "exec_env.h"
#include "heap_provider.h"
#include "heap_record.h"
#include "io_provider.h"
#include "live_threads.h"
#include "modules.h"
#include "pre_attach_log.h"
#include "recorder_link.h"
#include "reentry_guard.h"
#include "rule_cache.h"
#include "shared_rule_store.h"
#include "shim_state.h"
#include "signal_hooks.h"
#include "stack_table.h"
#include "samples.h"
#include "thread_provider.h"
#include "spoor/control.h"
#include "spoor/host/enable_spec.h"
#include "spoor/ring.h"
#include "spoor/trace_writer.h"

namespace spoor::preload {

constinit Provider g_heap{"Spoor.Heap"};

namespace {

struct Mapping {
  uint8_t* base = nullptr;
  size_t size = 0;
};

Mapping g_region;       // this process's region, while attached
int g_connection = -1;  // to the recorder: open while this image lives
// What g_connection was when it connected: a program may close the
// descriptor and reuse its number for a file or socket of its own (a
// daemon that closes every descriptor and opens new ones), which the shim
// must never write to or close.
dev_t g_connection_dev = 0;
ino_t g_connection_ino = 0;

// g_connection, while that number still is the connection; else -1. A raw
// fstat: this may run in a vfork child.
int live_connection() {
  struct stat st;
  if (g_connection < 0 || syscall(SYS_fstat, g_connection, &st) != 0 || st.st_dev != g_connection_dev ||
      st.st_ino != g_connection_ino)
    return -1;
  return g_connection;
}
uint32_t g_pid = 0;
uint32_t g_trace_pid = 0;  // g_pid as the recorder sees it (Welcome::pid)
// Found at attach; a fork child keeps its parent's (heap_record.h).
ProgramAllocator g_program_allocator;

// Where the control block goes when a fork child is not traced: its own
// memory, with every provider off, so its hooks cost one load each.
alignas(ControlBlock) uint8_t g_private_control[ControlBlock::bytes_for(SPOOR_MAX_PROVIDERS)];

Provider* const kShimProviders[] = {&g_heap, &g_stacks, &g_process, &g_io, &g_threads, &g_samples};

struct MetadataLog {
  RegionHeader* header;
  uint8_t* data;
  uint64_t used;
};

// Appends to the metadata log; the length is published once all blocks are
// written, so the recorder never sees half a block.
bool append_metadata(void* context, const void* bytes, size_t size) {
  auto* log = static_cast<MetadataLog*>(context);
  if (log->used + size > log->header->metadata_capacity) return false;
  std::memcpy(log->data + log->used, bytes, size);
  log->used += size;
  return true;
}

// With read(2), not an ifstream: the first stream of a process builds the
// C++ locale (tens of microseconds), and every process pays it. Read into
// the string itself, with no buffer on the stack (see join_recorder).
std::string read_file(const char* path) {
  std::string text;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  size_t used = 0;
  for (;;) {
    if (text.size() - used < 256) text.resize(used + 1024);
    const ssize_t n = read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(used);
  return text;
}

// Always in this order, so every image of a process (after an exec) gives
// the same events the same keys, and the descriptors written by its first
// image still apply.
void register_shim_events() {
  register_provider(g_heap);
  register_event(kHeapAlloc);
  register_event(kHeapFree);
  register_event(kHeapRealloc);
  register_event(kHeapMmap);
  register_event(kHeapMunmap);
  register_event(kHeapMremap);
  register_provider(g_stacks);
  register_event(kStack);
  register_provider(g_process);
  register_event(kModuleLoad);
  register_event(kModuleUnload);
  register_event(kProcessStart);
  register_event(kProcessFork);
  register_event(kProcessExec);
  register_event(kProcessExecFailed);
  register_event(kProcessExit);
  register_io_provider();
  register_provider(g_threads);
  register_event(kThreadStart);
  register_event(kThreadEnd);
  register_event(kThreadName);
  register_provider(g_samples);
  register_event(kSample);
  // Events added later go last, whatever their provider: the earlier
  // events keep their keys.
  register_event(kModuleImage);
  register_event(kSamplerStart);
  register_io_events_added_later();
  register_event(kCommandStart);
  register_event(kCommandEnd);
  register_event(kHeapOwnAllocator);
  register_event(kSamplerOff);
  register_event(kShimStarted);
}

void apply_provider_spec() {
  const char* spec = tracing_setting("SPOOR_PROVIDERS=");
  auto rules = host::parse_enable_spec(spec != nullptr && *spec ? spec : "*", nullptr);
  if (!rules) return;
  for (Provider* p : kShimProviders)
    apply_enable_state(*const_cast<ProviderControl*>(p->control()), host::state_for(*rules, p->name(), p->id()));
}

void disable_all_providers() {
  for (Provider* p : kShimProviders) apply_enable_state(*const_cast<ProviderControl*>(p->control()), EnableState{});
}

// A ring stays full when nothing drains it any more: the recorder was
// killed (SIGKILL, the OOM killer), or it finished while processes the
// program left still run (Ctrl-C ended its wait). Every 4096th time a
// thread finds its ring full, the connection is looked at (an fstat and a
// ppoll, no wait): hung up, every provider is switched off, and the
// program runs on untraced instead of walking stacks for events no one
// will read. A connection the program closed cannot tell, and tracing
// then goes on.
// Counted per thread: threads dropping events at once do not share a line.
constexpr uint32_t kFullRingsPerLook = 4096;
constinit thread_local uint32_t t_full_rings __attribute__((tls_model("initial-exec"))) = 0;
void stop_tracing_if_recorder_gone() {
  if (++t_full_rings % kFullRingsPerLook != 0) return;
  const int saved_errno = errno;
  const int connection = live_connection();
  pollfd look{connection, POLLRDHUP, 0};
  const struct timespec no_wait{0, 0};
  const bool gone = connection >= 0 && syscall(SYS_ppoll, &look, 1, &no_wait, nullptr, 0) == 1 &&
                    (look.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0;
  errno = saved_errno;
  if (gone) disable_all_providers();
}

// RingView::when_full: first whether the recorder is gone (above); then,
// under spoor record --wait-when-full, the writer sleeps 50 us at a time
// until the recorder has drained a packet. At most 200 ms for one record:
// past that the recorder is not keeping up at all (or the packet it waits
// on holds a record of this very thread's, whose signal handler is the
// writer now), and the shim stops waiting for good, so a stalled recorder
// stalls the program once. A raw system call: this runs inside hooks and
// signal handlers.
constexpr uint32_t kMostWaitRounds = 4000;
std::atomic<bool> g_wait_when_full{false};
bool wait_for_drainer(uint32_t asked) {
  stop_tracing_if_recorder_gone();
  if (!g_wait_when_full.load(std::memory_order_relaxed)) return false;
  if (asked > kMostWaitRounds) {
    g_wait_when_full.store(false, std::memory_order_relaxed);
    return false;
  }
  const int saved_errno = errno;
  const struct timespec pause{0, 50'000};
  syscall(SYS_nanosleep, &pause, nullptr);
  errno = saved_errno;
  return true;
}

// RingView::first_use: a packet's pages mapped in one system call when a
// writer first opens it, instead of one page fault per page (32 for a 128
// KiB packet; the recorder has mostly allocated them already, see
// Region::populate_ahead). First lap only, so ~130 calls per 16 MiB ring.
// MADV_POPULATE_WRITE is Linux 5.14's: where it fails, it is not tried
// again and the writes fault the pages in as before.
std::atomic<bool> g_populate_works{true};
void map_ring_packet(uint8_t* packet, uint32_t bytes) {
  if (!g_populate_works.load(std::memory_order_relaxed)) return;
  const int saved_errno = errno;  // inside a hook: the program's errno
  // The rings need not start on a page: from the page the packet starts in.
  const uintptr_t from = reinterpret_cast<uintptr_t>(packet) & ~uintptr_t{4095};
  const size_t length = reinterpret_cast<uintptr_t>(packet) + bytes - from;
  if (madvise(reinterpret_cast<void*>(from), length, MADV_POPULATE_WRITE) != 0 && (errno == EINVAL || errno == ENOSYS))
    g_populate_works.store(false, std::memory_order_relaxed);
  errno = saved_errno;
}

// Asks for the region and starts writing into it. fork_child: the
// registry and enable state came from the parent.
bool join_recorder(bool fork_child) {
  Welcome welcome{};
  int connection = -1, fd = -1, rule_store = -1;
  if (!request_region(&welcome, &connection, &fd, &rule_store)) return false;
  // One rule store for the whole recording: a fork child keeps its
  // parent's mapping of it. (attach_shared_rules closes the descriptor.)
  if (rule_store >= 0) {
    if (shared_rules_attached()) close(rule_store);
    else attach_shared_rules(rule_store);
  }
  struct stat st;
  void* base = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(sizeof(RegionHeader)))
    base = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);  // the mapping keeps the memory
  if (base == MAP_FAILED) {
    close(connection);
    return false;
  }
  auto* header = static_cast<RegionHeader*>(base);
  auto* bytes = static_cast<uint8_t*>(base);
  RingView view;
  if (header->magic != kRegionMagic || header->version != kRegionVersion ||
      header->total_size > static_cast<uint64_t>(st.st_size) ||
      ring_open(bytes + header->ring_offset, header->ring_size, &view) != Status::ok ||
      relocate_control_block(bytes + header->control_offset, header->control_size) != Status::ok) {
    munmap(base, static_cast<size_t>(st.st_size));
    close(connection);
    return false;
  }
  view.first_use = map_ring_packet;
  // A power of two from the recorder; anything else keeps every tick.
  const uint64_t grain = header->time_grain_ticks;
  if (grain > 1 && (grain & (grain - 1)) == 0) view.tick_mask = ~(grain - 1);
  const char* wait = tracing_setting("SPOOR_WAIT_WHEN_FULL=");
  g_wait_when_full.store(wait != nullptr && std::strcmp(wait, "1") == 0, std::memory_order_relaxed);
  view.when_full = wait_for_drainer;
  g_region = {bytes, static_cast<size_t>(st.st_size)};
  g_connection = connection;
  struct stat connection_stat;
  if (fstat(connection, &connection_stat) == 0) {
    g_connection_dev = connection_stat.st_dev;
    g_connection_ino = connection_stat.st_ino;
  }
  if (!fork_child) apply_provider_spec();
  // The recorder may have switched tracing off (its file failed) while the
  // rules above went in: they must not turn it back on (shared_region.h).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (header->tracing_off.load(std::memory_order_seq_cst) != 0) disable_all_providers();

  // Appended after what earlier images of this process wrote (the
  // recorder has copied that already).
  // The trace's numbers are the recorder's: in a pid namespace of its own
  // the process sees others (getpid() is 1 for unshare --pid's first).
  const auto pid = welcome.pid != 0 ? welcome.pid : static_cast<uint32_t>(getpid());
  const auto ppid = welcome.pid != 0 ? welcome.ppid : static_cast<uint32_t>(getppid());
  MetadataLog log{header, bytes + header->metadata_offset,
                  header->metadata_length.load(std::memory_order_acquire)};
  TraceWriter writer(Sink{&log, append_metadata});
  std::string comm = read_file("/proc/self/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  std::string cmdline = read_file("/proc/self/cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  writer.process(pid, ppid, comm.c_str(), cmdline.data(), cmdline.size());
  // After an exec the shim registered the same events in the same order,
  // so their keys and descriptors are the ones already described: only the
  // process (its new name and command line) is new.
  if (welcome.exec_count == 0) writer.new_metadata(pid);
  header->metadata_length.store(log.used, std::memory_order_release);
  header->attached_pid.store(pid, std::memory_order_release);
  g_pid = static_cast<uint32_t>(getpid());  // this namespace's: vfork children are told apart by it
  g_trace_pid = pid;

  // Events flow from here on: the ring goes in last, then the image and
  // the modules already loaded are described.
  ring_install(view);
  if (kProcessStart.enabled()) {
    // Not on the stack: the program's may be small (ulimit -s), and the
    // shim's start must fit where the program's own start fits. Static is
    // safe: this runs in the constructor or in a fork child, on one thread.
    static char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    static char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) cwd[0] = '\0';
    kProcessStart.write(ppid, welcome.exec_count, Str{exe}, Str{cwd});
  }
  scan_modules();
  if (!g_program_allocator.hooked && kHeapOwnAllocator.enabled()) {
    kHeapOwnAllocator.write(Str{g_program_allocator.owner});
    note_own_allocator(connection, g_program_allocator.owner);
  }
  describe_inherited_fds(connection);
  return true;
}

void after_fork_in_child() {
  if (g_region.base == nullptr) return;
  const uint64_t began_ns = shim_clock_ns();
  // Before any event: the thread ID cache still holds the parent's tid
  // (the port's own fork handler runs after this one).
  port::t_thread_id = 0;
  ReentryGuard guard;
  ring_install(RingView{});  // never into the parent's rings
  const int parents = live_connection();
  if (parents >= 0) close(parents);  // the parent's connection: ours to drop, not to use
  g_connection = -1;
  const Mapping parent = g_region;
  g_region = {};
  g_pid = 0;
  describe_modules_again_after_fork();
  reset_stack_table_after_fork();
  const bool joined = join_recorder(true);
  if (!joined) {
    relocate_control_block(g_private_control, sizeof g_private_control);
    disable_all_providers();
  }
  munmap(parent.base, parent.size);
  if (joined) {
    begin_thread_after_fork();
    note_shim_started(began_ns);
  }
}

// Whether this process is a program run by valgrind: its tool preloads
// its own vgpreload_core library into every program it runs.
bool is_valgrind_guest() {
  const char* preload = getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "/vgpreload_core-") != nullptr;
}

void attach() {
  const uint64_t began_ns = shim_clock_ns();
  // The program's handlers are wrapped whether or not a recorder is there.
  register_signal_fork_handlers();
  if (!capture_link_settings()) {  // not under spoor record: stay inert
    end_pre_attach_log();
    return;
  }
  ReentryGuard guard;  // nothing the shim does here is traced
  if (is_valgrind_guest()) {
    // The program runs inside valgrind's tool, a static binary spoor record
    // already named as not traced. Stay out of its way: valgrind checks
    // every load the shim makes (libunwind's walks read stack bytes it
    // calls uninitialised, and reports them as the program's errors).
    hide_tracing_environment();
    end_pre_attach_log();
    return;
  }
  hide_tracing_environment();
  register_shim_events();
  g_program_allocator = examine_program_allocator();
  note_program_allocator(g_program_allocator.is_glibc());
  const char* depth = tracing_setting("SPOOR_STACK_DEPTH=");
  init_stack_table(depth != nullptr ? std::atoi(depth) : 64, note_modules_changed);
  if (!join_recorder(false)) {
    end_pre_attach_log();
    return;
  }
  // The libraries' constructors' blocks, before any event of the program.
  replay_pre_attach_log();
  attach_threads();
  // After attach_threads: its own fork handler (forgetting the parent's
  // timer) must run before this one arms the child's.
  pthread_atfork(nullptr, nullptr, after_fork_in_child);
  note_exit_status_at_exit();
  note_shim_started(began_ns);
}

// Early (priority 101): the program's own constructors may allocate.
__attribute__((constructor(101))) void attach_at_load() { attach(); }

}  // namespace

bool shim_attached() { return g_region.base != nullptr; }

uint64_t shim_clock_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // the vDSO's: no system call of its own
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

void note_shim_started(uint64_t began_ns) {
  if (kShimStarted.enabled()) kShimStarted.write(shim_clock_ns() - began_ns);
}

void begin_cloned_process() {
  // What fork's child handlers do, in the order attach registered them.
  forget_timer_in_child();
  after_fork_in_child();
}

void count_handler_call_lost() {
  count_lost_event();
  if (g_region.base != nullptr)
    reinterpret_cast<RegionHeader*>(g_region.base)->handler_calls_lost.fetch_add(1, std::memory_order_relaxed);
}
void count_pre_attach_calls_lost(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) count_lost_event();
  if (g_region.base != nullptr && n > 0)
    reinterpret_cast<RegionHeader*>(g_region.base)->pre_attach_calls_lost.fetch_add(n, std::memory_order_relaxed);
}
uint32_t shim_pid() { return g_pid; }
uint32_t shim_trace_pid() { return g_trace_pid; }
int shim_connection() { return live_connection(); }

}  // namespace spoor::preload
