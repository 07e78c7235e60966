// The pre-attach allocation log (pre_attach_log.h). Before attach the
// process is normally single-threaded (constructors run on the main
// thread), but a constructor may start a thread: slots are claimed with an
// atomic counter and a block's pointer is published last, with release.
#include "pre_attach_log.h"

#include <algorithm>

#include "heap_provider.h"
#include "shim_libraries.h"
#include "shim_state.h"

namespace spoor::preload {

constinit std::atomic<bool> g_before_attach{true};

namespace {

struct Entry {
  std::atomic<uintptr_t> ptr;  // 0: not written yet
  uint64_t size;
  uintptr_t caller;            // the first return address outside the shim (the hook's)
  std::atomic<bool> freed;     // freed again before attach
};

constinit Entry g_log[kPreAttachCapacity] = {};  // 1 MiB of .bss
constinit std::atomic<uint32_t> g_used{0};
constinit std::atomic<uint64_t> g_dropped{0};

}  // namespace

void log_pre_attach_alloc(void* p, uint64_t size, const void* caller) {
  if (p == nullptr) return;
  const uint32_t at = g_used.fetch_add(1, std::memory_order_relaxed);
  if (at >= kPreAttachCapacity) {
    g_used.store(kPreAttachCapacity, std::memory_order_relaxed);
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_log[at].size = size;
  g_log[at].caller = reinterpret_cast<uintptr_t>(caller);
  g_log[at].ptr.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
}

// Newest first: a block freed before attach is most often a recent one.
void log_pre_attach_free(void* p) {
  if (p == nullptr) return;
  const auto key = reinterpret_cast<uintptr_t>(p);
  uint32_t i = g_used.load(std::memory_order_acquire);
  if (i > kPreAttachCapacity) i = kPreAttachCapacity;
  while (i-- > 0) {
    bool expected = false;
    if (g_log[i].ptr.load(std::memory_order_acquire) == key && !g_log[i].freed.load(std::memory_order_relaxed) &&
        g_log[i].freed.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
      return;
  }
}

void replay_pre_attach_log() {
  g_before_attach.store(false, std::memory_order_release);
  const uint32_t used = std::min(g_used.load(std::memory_order_acquire), kPreAttachCapacity);
  if (!kHeapAlloc.enabled()) return;
  const ShimOnlyLibraries shim_only;
  for (uint32_t i = 0; i < used; ++i) {
    const uintptr_t p = g_log[i].ptr.load(std::memory_order_acquire);
    // A library the program does not need allocated it for the shim.
    if (p == 0 || shim_only.contains(g_log[i].caller)) continue;
    kHeapAlloc.write(reinterpret_cast<const void*>(p), g_log[i].size, 0u);
    // Its Free right after it: an address freed and handed out again
    // before attach is logged twice, in order.
    if (g_log[i].freed.load(std::memory_order_acquire)) kHeapFree.write(reinterpret_cast<const void*>(p));
  }
  // Calls past the log's end were not kept: they show as lost events, so a
  // trace that misses them says so.
  count_pre_attach_calls_lost(pre_attach_dropped());
}

void end_pre_attach_log() { g_before_attach.store(false, std::memory_order_release); }

uint64_t pre_attach_dropped() { return g_dropped.load(std::memory_order_relaxed); }

}  // namespace spoor::preload
