// Interposed mmap, mmap64, munmap and mremap: the mappings the program makes
// itself (large buffers, its own allocators, mapped files). glibc's malloc
// maps through internal calls, which are not seen here, so nothing is
// counted twice.
#include <dlfcn.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>

#include "heap_provider.h"
#include "next_symbol.h"
#include "reentry_guard.h"
#include "stack_table.h"
#include "uring_raw.h"

namespace spoor::preload {
namespace {

using MmapFn = void* (*)(void*, size_t, int, int, int, off_t);
using MunmapFn = int (*)(void*, size_t);
using MremapFn = void* (*)(void*, size_t, size_t, int, ...);

std::atomic<MmapFn> g_mmap{nullptr}, g_mmap64{nullptr};
std::atomic<MunmapFn> g_munmap{nullptr};
std::atomic<MremapFn> g_mremap{nullptr};


// Skip 2: this function and the hook.
__attribute__((noinline)) void record_mmap(void* p, size_t size, int prot, int flags, int fd) {
  if (kHeapMmap.enabled()) kHeapMmap.write(p, size, prot, flags, (flags & MAP_ANONYMOUS) ? -1 : fd, current_stack_id(2));
}

__attribute__((noinline)) void record_mremap(void* old, size_t old_size, void* p, size_t size) {
  if (kHeapMremap.enabled()) kHeapMremap.write(old, old_size, p, size, current_stack_id(2));
}

// The same for a signal handler that interrupted the shim (ReentryGuard::in_handler):
// a one-frame stack, the hook's return address.
__attribute__((noinline)) void record_mmap_in_handler(void* p, size_t size, int prot, int flags, int fd,
                                                      void* caller) {
  if (kHeapMmap.enabled())
    kHeapMmap.write(p, size, prot, flags, (flags & MAP_ANONYMOUS) ? -1 : fd, stack_id_of(&caller, 1));
}
__attribute__((noinline)) void record_mremap_in_handler(void* old, size_t old_size, void* p, size_t size,
                                                        void* caller) {
  if (kHeapMremap.enabled()) kHeapMremap.write(old, old_size, p, size, stack_id_of(&caller, 1));
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

extern "C" {

SPOOR_INTERPOSE void* mmap(void* addr, size_t size, int prot, int flags, int fd, off_t offset) {
  ReentryGuard guard;
  void* p;
  {
    const RealCall real(guard);
    p = next_symbol(g_mmap, "mmap")(addr, size, prot, flags, fd, offset);
  }
  if (p == MAP_FAILED) return p;
  const int err = errno;
  // A ring the program drives with its own system calls (uring_raw.h).
  if (SPOOR_UNLIKELY(g_raw_rings_seen.load(std::memory_order_relaxed)) && fd >= 0 && (flags & MAP_SHARED) != 0)
    note_ring_mapping(fd, offset, p, size);
  if (guard.entered()) record_mmap(p, size, prot, flags, fd);
  else if (guard.in_handler()) record_mmap_in_handler(p, size, prot, flags, fd, __builtin_return_address(0));
  errno = err;
  return p;
}

SPOOR_INTERPOSE void* mmap64(void* addr, size_t size, int prot, int flags, int fd, off_t offset) {
  ReentryGuard guard;
  void* p;
  {
    const RealCall real(guard);
    p = next_symbol(g_mmap64, "mmap64")(addr, size, prot, flags, fd, offset);
  }
  if (p == MAP_FAILED) return p;
  const int err = errno;
  // A ring the program drives with its own system calls (uring_raw.h).
  if (SPOOR_UNLIKELY(g_raw_rings_seen.load(std::memory_order_relaxed)) && fd >= 0 && (flags & MAP_SHARED) != 0)
    note_ring_mapping(fd, offset, p, size);
  if (guard.entered()) record_mmap(p, size, prot, flags, fd);
  else if (guard.in_handler()) record_mmap_in_handler(p, size, prot, flags, fd, __builtin_return_address(0));
  errno = err;
  return p;
}

SPOOR_INTERPOSE int munmap(void* addr, size_t size) {
  // A followed ring's last completions, while its memory is there.
  if (SPOOR_UNLIKELY(g_raw_rings_seen.load(std::memory_order_relaxed))) before_ring_unmap(addr, size);
  ReentryGuard guard;
  // Before the unmap, as free: the range may be mapped again at once.
  if (kHeapMunmap.enabled() && guard.records()) kHeapMunmap.write(addr, size);
  const RealCall real(guard);
  return next_symbol(g_munmap, "munmap")(addr, size);
}

SPOOR_INTERPOSE void* mremap(void* old, size_t old_size, size_t size, int flags, ...) {
  void* fixed_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    fixed_address = va_arg(ap, void*);
    va_end(ap);
  }
  ReentryGuard guard;
  void* p;
  {
    const RealCall real(guard);
    p = next_symbol(g_mremap, "mremap")(old, old_size, size, flags, fixed_address);
  }
  if (p == MAP_FAILED) return p;
  const int err = errno;
  if (guard.entered()) record_mremap(old, old_size, p, size);
  else if (guard.in_handler()) record_mremap_in_handler(old, old_size, p, size, __builtin_return_address(0));
  errno = err;
  return p;
}

}  // extern "C"
