// Joins the recorder's shared region when libspoor-preload.so loads: maps
// the region named by SPOOR_REGION_FD, installs its rings, moves the control
// block into it, registers the shim's providers and events, enables them per
// SPOOR_PROVIDERS, and publishes their metadata for the recorder.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "../shared_region.h"
#include "heap_provider.h"
#include "modules.h"
#include "stack_table.h"
#include "reentry_guard.h"
#include "samples.h"
#include "thread_provider.h"
#include "spoor/control.h"
#include "spoor/host/enable_spec.h"
#include "spoor/ring.h"
#include "spoor/trace_writer.h"

namespace spoor::preload {

constinit Provider g_heap{"Spoor.Heap"};

namespace {

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

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void attach() {
  const char* fd_text = std::getenv(kRegionFdEnv);
  if (fd_text == nullptr) return;  // not under spoor record: stay inert
  ReentryGuard guard;              // nothing the shim does here is traced
  const int fd = std::atoi(fd_text);
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(RegionHeader))) return;
  void* base = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return;
  auto* header = static_cast<RegionHeader*>(base);
  const auto pid = static_cast<uint32_t>(getpid());
  uint32_t attached = 0;
  const bool valid = header->magic == kRegionMagic && header->version == kRegionVersion &&
                     header->total_size <= static_cast<uint64_t>(st.st_size);
  const bool first = valid && header->attached_pid.compare_exchange_strong(attached, pid);
  // The traced process exec'ed a new image: same pid, same region.
  const bool after_exec = valid && !first && attached == pid;
  if (!first && !after_exec) {
    // Not ours: a child that inherited the descriptor (children get regions
    // of their own in a later version), or a damaged region.
    munmap(base, static_cast<size_t>(st.st_size));
    return;
  }
  auto* bytes = static_cast<uint8_t*>(base);
  RingView view;
  if (ring_open(bytes + header->ring_offset, header->ring_size, &view) != Status::ok) return;
  if (relocate_control_block(bytes + header->control_offset, header->control_size) != Status::ok) return;

  // Always in this order, so every image of the process (after an exec)
  // gives the same events the same keys.
  register_provider(g_heap);
  register_event(kHeapAlloc);
  register_event(kHeapFree);
  register_event(kHeapRealloc);
  register_provider(g_stacks);
  register_event(kStack);
  register_provider(g_process);
  register_event(kModuleLoad);
  register_event(kModuleUnload);
  register_provider(g_threads);
  register_event(kThreadStart);
  register_event(kThreadEnd);
  register_event(kThreadName);
  register_provider(g_samples);
  register_event(kSample);

  const char* depth = std::getenv("SPOOR_STACK_DEPTH");
  init_stack_table(depth != nullptr ? std::atoi(depth) : 64);

  const char* spec = std::getenv("SPOOR_PROVIDERS");
  auto rules = host::parse_enable_spec(spec != nullptr && *spec ? spec : "*", nullptr);
  if (rules) {
    for (Provider* p : {&g_heap, &g_stacks, &g_process, &g_threads, &g_samples})
      apply_enable_state(*const_cast<ProviderControl*>(p->control()),
                         host::state_for(*rules, p->name(), p->id()));
  }

  // Appended after what earlier images of this process wrote (the
  // recorder has copied that already).
  MetadataLog log{header, bytes + header->metadata_offset,
                  header->metadata_length.load(std::memory_order_acquire)};
  TraceWriter writer(Sink{&log, append_metadata});
  std::string comm = read_file("/proc/self/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  std::string cmdline = read_file("/proc/self/cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  writer.process(pid, static_cast<uint32_t>(getppid()), comm.c_str(), cmdline.data(), cmdline.size());
  // The shim registers the same events in the same order in every image,
  // so after an exec their keys and descriptors are the ones already
  // described: only the process (its new name and command line) is new.
  if (!after_exec) writer.new_metadata(pid);
  header->metadata_length.store(log.used, std::memory_order_release);
  // Events flow from here on: the ring goes in last, then the modules
  // already loaded are described.
  ring_install(view);
  scan_modules();
  attach_threads();
}

// Early (priority 101): the program's own constructors may allocate.
__attribute__((constructor(101))) void attach_at_load() { attach(); }

}  // namespace
}  // namespace spoor::preload
