// Interposed allocator functions. Each forwards to the next definition in
// the lookup order (glibc's, or an allocator library the program links) and
// then records the call, unless this thread is already inside the shim.
//
// The real functions are found with dlsym(RTLD_NEXT) on first use. dlsym
// itself allocates (calloc) on some paths, so while a lookup is running,
// allocations are served from a static bootstrap pool that free() and
// realloc() recognise and never hand to the real allocator.
#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "heap_provider.h"
#include "reentry_guard.h"

namespace spoor::preload {
namespace {

using MallocFn = void* (*)(size_t);
using FreeFn = void (*)(void*);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);

std::atomic<MallocFn> g_malloc{nullptr};
std::atomic<FreeFn> g_free{nullptr};
std::atomic<CallocFn> g_calloc{nullptr};
std::atomic<ReallocFn> g_realloc{nullptr};

// --- bootstrap pool --------------------------------------------------------
alignas(16) unsigned char g_pool[64 * 1024];
std::atomic<size_t> g_pool_used{0};

bool in_pool(const void* p) {
  return p >= static_cast<const void*>(g_pool) && p < static_cast<const void*>(g_pool + sizeof g_pool);
}

void* pool_alloc(size_t n) {
  n = (n + 15) & ~size_t{15};
  const size_t at = g_pool_used.fetch_add(n, std::memory_order_relaxed);
  if (at + n > sizeof g_pool) return nullptr;  // dlsym never needs this much
  return g_pool + at;
}

constinit thread_local bool t_resolving __attribute__((tls_model("initial-exec"))) = false;

template <class Fn>
Fn resolve(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  t_resolving = true;
  fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  t_resolving = false;
  slot.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace

constinit thread_local bool t_in_shim __attribute__((tls_model("initial-exec"))) = false;

}  // namespace spoor::preload

using namespace spoor::preload;

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

extern "C" {

SPOOR_INTERPOSE void* malloc(size_t size) {
  if (t_resolving) return pool_alloc(size);
  void* p = resolve(g_malloc, "malloc")(size);
  ReentryGuard guard;
  if (guard.entered()) kHeapAlloc.write(p, size);
  return p;
}

SPOOR_INTERPOSE void free(void* p) {
  if (p == nullptr || in_pool(p)) return;
  // Record before freeing: once freed, another thread may get the same
  // address from malloc and its Alloc event must come after this Free.
  {
    ReentryGuard guard;
    if (guard.entered()) kHeapFree.write(p);
  }
  resolve(g_free, "free")(p);
}

SPOOR_INTERPOSE void* calloc(size_t count, size_t size) {
  if (t_resolving) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return nullptr;
    return pool_alloc(bytes);  // static storage is zeroed
  }
  void* p = resolve(g_calloc, "calloc")(count, size);
  ReentryGuard guard;
  size_t bytes = 0;
  if (guard.entered() && !__builtin_mul_overflow(count, size, &bytes)) kHeapAlloc.write(p, bytes);
  return p;
}

SPOOR_INTERPOSE void* realloc(void* old, size_t size) {
  if (in_pool(old)) {
    // Moving a bootstrap block to the real heap: a fresh allocation.
    void* p = malloc(size);
    const size_t left = static_cast<size_t>(g_pool + sizeof g_pool - static_cast<unsigned char*>(old));
    if (p != nullptr) std::memcpy(p, old, size < left ? size : left);
    return p;
  }
  void* p = resolve(g_realloc, "realloc")(old, size);
  ReentryGuard guard;
  // One event, after it succeeded: the old block is gone only then.
  if (guard.entered() && (p != nullptr || size == 0)) kHeapRealloc.write(old, p, size);
  return p;
}

}  // extern "C"
