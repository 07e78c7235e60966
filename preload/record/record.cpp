// The recorder: a shared region (rings, control block, metadata log) in a
// memfd the traced program inherits, and a loop that copies its metadata
// and drains its rings into the trace file until the program ends.
#include "record.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "../shared_region.h"
#include "spoor/control.h"
#include "spoor/drain.h"
#include "spoor/host/clock.h"
#include "spoor/host/enable_spec.h"
#include "spoor/host/file_sink.h"
#include "spoor/ring.h"
#include "spoor/trace_writer.h"

extern char** environ;

namespace spoor::record {
namespace {

using preload::RegionHeader;

constexpr uint64_t kMetadataCapacity = 1u << 20;

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

// The region: header, rings, control block, metadata log, page-aligned.
struct Region {
  int fd = -1;
  uint8_t* base = nullptr;
  size_t size = 0;
  RegionHeader* header = nullptr;
  RingView ring;

  ~Region() {
    if (base) munmap(base, size);
    if (fd >= 0) close(fd);
  }

  bool create(uint32_t cpus, const RecordOptions& o, std::string* error) {
    const uint64_t ring_size =
        ring_bytes_needed(cpus, o.packet_bytes, packets_per_cpu(o.buffer_bytes_per_cpu, o.packet_bytes));
    const uint64_t control_size = ControlBlock::bytes_for(SPOOR_MAX_PROVIDERS);
    const uint64_t ring_off = preload::align_region(sizeof(RegionHeader));
    const uint64_t control_off = preload::align_region(ring_off + ring_size);
    const uint64_t meta_off = preload::align_region(control_off + control_size);
    size = static_cast<size_t>(meta_off + kMetadataCapacity);
    // No MFD_CLOEXEC: the traced program inherits the descriptor.
    fd = memfd_create("spoor-region", 0);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
      *error = std::string("cannot create the shared region: ") + std::strerror(errno);
      return false;
    }
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      *error = std::string("cannot map the shared region: ") + std::strerror(errno);
      return false;
    }
    base = static_cast<uint8_t*>(p);
    header = new (base) RegionHeader{};
    header->magic = preload::kRegionMagic;
    header->version = preload::kRegionVersion;
    header->total_size = size;
    header->ring_offset = ring_off;
    header->ring_size = ring_size;
    header->control_offset = control_off;
    header->control_size = control_size;
    header->metadata_offset = meta_off;
    header->metadata_capacity = kMetadataCapacity;
    if (ring_init(base + ring_off, ring_size, cpus, o.packet_bytes, &ring) != Status::ok) {
      *error = "cannot lay out the ring buffers";
      return false;
    }
    return true;
  }
};

}  // namespace

std::string find_preload_library() {
  if (const char* env = std::getenv("SPOOR_PRELOAD_LIB"); env && *env) return env;
  if (exists(SPOOR_BUILD_PRELOAD_PATH)) return SPOOR_BUILD_PRELOAD_PATH;
  if (exists(SPOOR_INSTALL_PRELOAD_PATH)) return SPOOR_INSTALL_PRELOAD_PATH;
  return "";
}

bool run_record(const RecordOptions& options, RecordResult* result, std::string* error) {
  if (options.command.empty()) {
    *error = "no command to record";
    return false;
  }
  if (!host::parse_enable_spec(options.providers, error)) return false;
  const std::string preload = find_preload_library();
  if (preload.empty()) {
    *error = "cannot find libspoor-preload.so (set SPOOR_PRELOAD_LIB to its path)";
    return false;
  }
  const long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  Region region;
  if (!region.create(ncpu > 0 ? static_cast<uint32_t>(ncpu) : 1, options, error)) return false;

  // The program runs with the shim, the region's descriptor and the spec.
  const char* old_preload = std::getenv("LD_PRELOAD");
  const std::string ld_preload = preload + (old_preload && *old_preload ? std::string(":") + old_preload : "");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("LD_PRELOAD=") || kv.starts_with("SPOOR_REGION_FD=") ||
        kv.starts_with("SPOOR_PROVIDERS=") || kv.starts_with("SPOOR_STACK_DEPTH="))
      continue;
    env_strings.emplace_back(kv);
  }
  env_strings.push_back("LD_PRELOAD=" + ld_preload);
  env_strings.push_back(std::string(preload::kRegionFdEnv) + "=" + std::to_string(region.fd));
  env_strings.push_back("SPOOR_PROVIDERS=" + options.providers);
  env_strings.push_back("SPOOR_STACK_DEPTH=" + std::to_string(options.stack_depth));
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options.command;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Report exec failures through a close-on-exec pipe: EOF means it ran.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    *error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return false;
  }
  const auto started = std::chrono::steady_clock::now();
  const host::ClockSample clock_start = host::sample_clock();
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("cannot fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    close(exec_pipe[0]);
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    if (write(exec_pipe[1], &err, sizeof err) < 0) _exit(127);
    _exit(127);
  }
  close(exec_pipe[1]);
  int exec_errno = 0;
  const bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(exec_pipe[0]);
  if (exec_failed) {
    waitpid(pid, nullptr, 0);
    *error = "cannot run '" + options.command[0] + "': " + std::strerror(exec_errno);
    return false;
  }

  result->pid = pid;
  result->output_path = options.output_path.empty()
                            ? "spoor-" + base_name(options.command[0]) + "-" + std::to_string(pid) + ".spoor"
                            : options.output_path;
  host::FileSink file;
  if (!file.open(result->output_path, error)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return false;
  }
  file.compress({.enabled = options.compress});
  TraceWriter writer(file.sink());
  writer.file_header();
  writer.clock(host::clock_block(clock_start, host::sample_clock()));
  for (uint32_t cpu = 0; cpu < region.ring.cpu_count; ++cpu)
    writer.stream(cpu, static_cast<uint32_t>(pid), cpu);

  // Ctrl-C and Ctrl-\ are for the program (same process group); the
  // recorder keeps going until it ends, then finishes the file.
  struct sigaction ignore{}, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);

  uint64_t metadata_copied = 0;
  auto copy_metadata = [&] {
    const uint64_t len = region.header->metadata_length.load(std::memory_order_acquire);
    if (len > metadata_copied && len <= region.header->metadata_capacity) {
      file.sink().write(&file, region.base + region.header->metadata_offset + metadata_copied,
                        len - metadata_copied);
      metadata_copied = len;
    }
  };
  DrainTotals totals;
  auto drain = [&](bool final) {
    copy_metadata();  // descriptors before the packets that use them
    drain_ring(region.ring, writer, final, totals);
    file.flush();
  };

  int status = 0;
  auto last_flush = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    drain(false);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_flush >= std::chrono::milliseconds(250)) {
      flush_ring(region.ring);
      last_flush = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  // The program is gone: close every open packet and take all that was
  // committed, whatever state its writers died in.
  flush_ring(region.ring);
  drain(true);
  result->preload_attached = region.header->attached_pid.load() == static_cast<uint32_t>(pid);
  writer.clock(host::clock_block(clock_start, host::sample_clock()));
  end_streams(region.ring, writer, totals);
  result->events = totals.events;
  result->lost = totals.lost;
  result->abandoned_bytes = totals.abandoned_bytes;
  if (!file.close()) {
    *error = "writing '" + result->output_path + "' failed: " + std::strerror(file.error_number());
    return false;
  }
  result->file_bytes = file.bytes_written();
  result->compression = file.compression_stats();
  result->how_it_ended = describe_status(status, &result->exit_status);
  result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return true;
}

}  // namespace spoor::record
