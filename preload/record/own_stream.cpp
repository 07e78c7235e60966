#include "own_stream.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "../process_events.h"
#include "spoor/control.h"
#include "spoor/registry.h"

namespace spoor::preload {
// The recorder registers the same provider as the shim (same name, so the
// same ID), with only the event it writes.
constinit Provider g_process{"Spoor.Process"};
}  // namespace spoor::preload

namespace spoor::record {
namespace {
constexpr uint32_t kPacketBytes = 4096;
constexpr uint32_t kPacketsPerCpu = 16;
}  // namespace

void OwnStream::Free::operator()(void* p) const { std::free(p); }

OwnStream::~OwnStream() {
  if (memory_) ring_install(RingView{});
}

bool OwnStream::start(uint32_t cpus, std::string* error) {
  const size_t size = (ring_bytes_needed(cpus, kPacketBytes, kPacketsPerCpu) + 63) & ~size_t{63};
  memory_.reset(std::aligned_alloc(64, size));
  if (ring_init(memory_.get(), size, cpus, kPacketBytes, &ring_) != Status::ok) {
    *error = "cannot lay out the recorder's own ring";
    return false;
  }
  register_provider(preload::g_process);
  register_event(preload::kProcessExit);
  register_event(preload::kProcessRunning);
  EnableState on;
  on.enabled = true;
  apply_enable_state(*const_cast<ProviderControl*>(preload::g_process.control()), on);
  ring_install(ring_);
  return true;
}

void OwnStream::describe(TraceWriter& writer, uint32_t first_stream) {
  const auto pid = static_cast<uint32_t>(getpid());
  static constexpr std::string_view kCmdline{"spoor\0record", 12};
  writer.process(pid, static_cast<uint32_t>(getppid()), "spoor", kCmdline.data(), kCmdline.size());
  writer.new_metadata(pid);
  for (uint32_t cpu = 0; cpu < ring_.cpu_count; ++cpu) writer.stream(first_stream + cpu, pid, cpu);
}

void OwnStream::process_exited(pid_t pid, int status) {
  if (!(WIFEXITED(status) || WIFSIGNALED(status))) return;
  preload::kProcessExit.write(static_cast<uint32_t>(pid), WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                              static_cast<uint8_t>(WIFSIGNALED(status) ? WTERMSIG(status) : 0),
                              WIFSIGNALED(status) && WCOREDUMP(status));
}

void OwnStream::process_running(pid_t pid) { preload::kProcessRunning.write(static_cast<uint32_t>(pid)); }

}  // namespace spoor::record
