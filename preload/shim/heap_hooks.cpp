// Interposed allocator functions. Each forwards to the next definition in
// the lookup order (glibc's, or an allocator library the program links) and
// then records the call, unless this thread is already inside the shim.
//
// The real functions are found with dlsym(RTLD_NEXT) on first use. dlsym
// itself allocates (calloc) on some paths, so while a lookup is running,
// allocations are served from a static bootstrap pool that free() and
// realloc() recognise and never hand to the real allocator.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "heap_provider.h"
#include "heap_record.h"
#include "modules.h"
#include "pre_attach_log.h"
#include "stack_table.h"
#include "reentry_guard.h"
#include "rule_cache.h"

namespace spoor::preload {
namespace {

using MallocFn = void* (*)(size_t);
using FreeFn = void (*)(void*);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using PosixMemalignFn = int (*)(void**, size_t, size_t);
using AlignedFn = void* (*)(size_t, size_t);
using ReallocArrayFn = void* (*)(void*, size_t, size_t);

std::atomic<MallocFn> g_malloc{nullptr};
std::atomic<FreeFn> g_free{nullptr};
std::atomic<CallocFn> g_calloc{nullptr};
std::atomic<ReallocFn> g_realloc{nullptr};
std::atomic<PosixMemalignFn> g_posix_memalign{nullptr};
std::atomic<AlignedFn> g_aligned_alloc{nullptr};
std::atomic<AlignedFn> g_memalign{nullptr};
std::atomic<MallocFn> g_valloc{nullptr};
std::atomic<MallocFn> g_pvalloc{nullptr};
std::atomic<ReallocArrayFn> g_reallocarray{nullptr};

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

// What the allocation hooks of this thread are doing besides their usual
// job; read first by malloc and calloc (one TLS load, zero on the usual
// path).
enum Resolving : uint8_t {
  kNotResolving = 0,
  kResolving = 1,  // a dlsym lookup: allocations come from the bootstrap pool
  kProbing = 2,    // examine_program_allocator calls the program's malloc: note that it got here
};
constinit thread_local uint8_t t_resolving __attribute__((tls_model("initial-exec"))) = kNotResolving;
constinit thread_local bool t_probe_reached __attribute__((tls_model("initial-exec"))) = false;

template <class Fn>
Fn resolve(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  t_resolving = kResolving;
  fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  t_resolving = kNotResolving;
  slot.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace

constinit thread_local bool t_in_shim __attribute__((tls_model("initial-exec"))) = false;
constinit thread_local uint32_t t_handlers_over_shim __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local bool t_handler_in_hook __attribute__((tls_model("initial-exec"))) = false;

// Stacks are captured only when the event will be written: the skip of 2
// drops these helpers' and the hook's frames.
// A module loaded since the last event is described before a stack that
// may point into it.
// Before attach the events are off and the call goes to the pre-attach log
// (pre_attach_log.h): one more load, on the disabled path only.
// The allocator has returned: its stack may build unwind rules even when
// it is not glibc's (rule_cache.h). Two thread-local stores.
// `caller`, the hook's return address, is read only before attach.
__attribute__((noinline)) void record_alloc(void* p, uint64_t size, const void* caller) {
  AfterAllocatorReturned allocator_returned;
  rescan_modules_if_changed();
  if (kHeapAlloc.enabled()) kHeapAlloc.write(p, size, current_stack_id(2));
  else if (SPOOR_UNLIKELY(g_before_attach.load(std::memory_order_relaxed))) log_pre_attach_alloc(p, size, caller);
}
__attribute__((noinline)) void record_realloc(void* old, void* p, uint64_t size, const void* caller) {
  AfterAllocatorReturned allocator_returned;
  rescan_modules_if_changed();
  if (kHeapRealloc.enabled()) {
    kHeapRealloc.write(old, p, size, current_stack_id(2));
  } else if (SPOOR_UNLIKELY(g_before_attach.load(std::memory_order_relaxed))) {
    log_pre_attach_free(old);
    log_pre_attach_alloc(p, size, caller);
  }
}
void record_free(void* p) {
  if (kHeapFree.enabled()) kHeapFree.write(p);
  else if (SPOOR_UNLIKELY(g_before_attach.load(std::memory_order_relaxed))) log_pre_attach_free(p);
}

// One load and branch each, off the program's usual path.
__attribute__((noinline)) void record_alloc_in_handler(void* p, uint64_t size, void* caller) {
  if (kHeapAlloc.enabled()) kHeapAlloc.write(p, size, stack_id_of(&caller, 1));
}
__attribute__((noinline)) void record_realloc_in_handler(void* old, void* p, uint64_t size, void* caller) {
  if (kHeapRealloc.enabled()) kHeapRealloc.write(old, p, size, stack_id_of(&caller, 1));
}
void record_free_in_handler(void* p) {
  if (kHeapFree.enabled()) kHeapFree.write(p);
}

void resolve_real_free() { resolve(g_free, "free"); }

}  // namespace spoor::preload

// The shim's own code (as called_from_shim below).
extern "C" const char __ehdr_start[] __attribute__((visibility("hidden")));

namespace spoor::preload {

// Whether `address` (what dlsym found for a function) is a non-PIE
// executable's PLT entry standing for a function it does not define: an
// executable that takes a function's address in code (node does, for
// malloc) has an undefined symbol whose value is that entry, and every
// module sees the entry as the function's address. It jumps to the
// definition its GOT was bound to.
bool is_plt_entry_for_undefined(void* address) {
  Dl_info info{};
  void* entry = nullptr;  // the matching ElfW(Sym)
  if (dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return false;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  return symbol->st_shndx == SHN_UNDEF && symbol->st_value != 0;
}

// Calls the program's malloc (and free) once to see whether the call
// reaches the shim's hook. The caller holds the ReentryGuard, so the hooks
// record nothing.
bool program_malloc_reaches_shim(void* program_malloc) {
  t_probe_reached = false;
  t_resolving = kProbing;
  void* p = reinterpret_cast<MallocFn>(program_malloc)(1);
  t_resolving = kNotResolving;
  const bool reached = t_probe_reached;
  if (void* program_free = dlsym(RTLD_DEFAULT, "free")) reinterpret_cast<FreeFn>(program_free)(p);
  return reached;
}

ProgramAllocator examine_program_allocator() {
  ProgramAllocator a;
  Dl_info found{}, libc{};
  // The program's calls reach the shim's malloc...
  void* called = dlsym(RTLD_DEFAULT, "malloc");
  if (called != nullptr && dladdr(called, &found) != 0) {
    a.hooked = found.dli_fbase == static_cast<const void*>(__ehdr_start) ||
               (is_plt_entry_for_undefined(called) && program_malloc_reaches_shim(called));
    // The loader names the executable as it was run (relative, or "").
    if (!a.hooked && found.dli_fname != nullptr && found.dli_fname[0] == '/')
      std::strncpy(a.owner, found.dli_fname, sizeof a.owner - 1);
    else if (!a.hooked && readlink("/proc/self/exe", a.owner, sizeof a.owner - 1) < 0)
      std::strncpy(a.owner, "the program's executable", sizeof a.owner - 1);
  }
  // ... and the shim's calls reach the C library's.
  void* next = reinterpret_cast<void*>(resolve(g_malloc, "malloc"));
  void* start = dlsym(RTLD_DEFAULT, "__libc_start_main");
  a.glibc_next = next != nullptr && start != nullptr && dladdr(next, &found) != 0 && dladdr(start, &libc) != 0 &&
                 found.dli_fbase == libc.dli_fbase;
  return a;
}

}  // namespace spoor::preload

using namespace spoor::preload;

// The shim's own code, from its ELF header to the end of its text (both
// provided by the linker). The static libstdc++ it carries allocates its
// exception emergency pool (72 KiB) from a constructor that runs after
// attach, outside any hook: not the program's allocation. One compare pair
// on malloc's path.
extern "C" const char etext[] __attribute__((visibility("hidden")));
namespace {
bool called_from_shim(const void* return_address) {
  return return_address >= static_cast<const void*>(__ehdr_start) && return_address < static_cast<const void*>(etext);
}
}  // namespace

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

extern "C" {

SPOOR_INTERPOSE void* malloc(size_t size) {
  if (t_resolving) {
    if (t_resolving == kResolving) return pool_alloc(size);
    t_probe_reached = true;  // examine_program_allocator's call, under its guard: not recorded
  }
  void* p = call_real_allocator(resolve(g_malloc, "malloc"), size);
  ReentryGuard guard;
  if (guard.entered()) {
    if (!called_from_shim(__builtin_return_address(0))) record_alloc(p, size, __builtin_return_address(0));
  } else if (guard.in_handler()) {
    record_alloc_in_handler(p, size, __builtin_return_address(0));
  }
  return p;
}

SPOOR_INTERPOSE void free(void* p) {
  if (p == nullptr || in_pool(p)) return;
  // Record before freeing: once freed, another thread may get the same
  // address from malloc and its Alloc event must come after this Free.
  {
    ReentryGuard guard;
    if (guard.entered()) record_free(p);
    else if (guard.in_handler()) record_free_in_handler(p);
  }
  FreeFn real = g_free.load(std::memory_order_acquire);
  // A free inside the dlsym that looks up an allocator function, before
  // free itself was found: dlsym drops the error text a failed lookup left
  // (glibc's dlerror state), and looking free up from here would run into
  // the same drop again, without end (a UBSan-built program's runtime
  // leaves such an error before main). The block, a few bytes, is left
  // allocated; the program has let go of it all the same.
  if (real == nullptr && t_resolving == kResolving) return;
  call_real_allocator(real != nullptr ? real : resolve(g_free, "free"), p);
}

SPOOR_INTERPOSE void* calloc(size_t count, size_t size) {
  if (t_resolving == kResolving) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return nullptr;
    return pool_alloc(bytes);  // static storage is zeroed
  }
  void* p = call_real_allocator(resolve(g_calloc, "calloc"), count, size);
  ReentryGuard guard;
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes)) return p;
  if (guard.entered()) record_alloc(p, bytes, __builtin_return_address(0));
  else if (guard.in_handler()) record_alloc_in_handler(p, bytes, __builtin_return_address(0));
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
  void* p = call_real_allocator(resolve(g_realloc, "realloc"), old, size);
  ReentryGuard guard;
  // One event, after it succeeded: the old block is gone only then.
  if (p == nullptr && size != 0) return p;
  if (guard.entered()) record_realloc(old, p, size, __builtin_return_address(0));
  else if (guard.in_handler())
    record_realloc_in_handler(old, p, size, __builtin_return_address(0));
  return p;
}

// glibc implements these without going through malloc, so each is
// interposed. The guard is held across the real call: an implementation
// that does call an interposed function (glibc's reallocarray calls
// realloc) is then still counted once, here.
SPOOR_INTERPOSE int posix_memalign(void** out, size_t alignment, size_t size) {
  ReentryGuard guard;
  const int err = call_real(guard, resolve(g_posix_memalign, "posix_memalign"), out, alignment, size);
  if (err != 0) return err;
  if (guard.entered()) record_alloc(*out, size, __builtin_return_address(0));
  else if (guard.in_handler()) record_alloc_in_handler(*out, size, __builtin_return_address(0));
  return err;
}

SPOOR_INTERPOSE void* aligned_alloc(size_t alignment, size_t size) {
  ReentryGuard guard;
  void* p = call_real(guard, resolve(g_aligned_alloc, "aligned_alloc"), alignment, size);
  if (p == nullptr) return p;
  if (guard.entered()) record_alloc(p, size, __builtin_return_address(0));
  else if (guard.in_handler()) record_alloc_in_handler(p, size, __builtin_return_address(0));
  return p;
}

SPOOR_INTERPOSE void* memalign(size_t alignment, size_t size) {
  ReentryGuard guard;
  void* p = call_real(guard, resolve(g_memalign, "memalign"), alignment, size);
  if (p == nullptr) return p;
  if (guard.entered()) record_alloc(p, size, __builtin_return_address(0));
  else if (guard.in_handler()) record_alloc_in_handler(p, size, __builtin_return_address(0));
  return p;
}

SPOOR_INTERPOSE void* valloc(size_t size) {
  ReentryGuard guard;
  void* p = call_real(guard, resolve(g_valloc, "valloc"), size);
  if (p == nullptr) return p;
  if (guard.entered()) record_alloc(p, size, __builtin_return_address(0));
  else if (guard.in_handler()) record_alloc_in_handler(p, size, __builtin_return_address(0));
  return p;
}

SPOOR_INTERPOSE void* pvalloc(size_t size) {
  ReentryGuard guard;
  void* p = call_real(guard, resolve(g_pvalloc, "pvalloc"), size);
  if (p == nullptr) return p;
  // pvalloc rounds the size up to whole pages; the program owns all of it.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uint64_t owned = size == 0 ? page : (size + page - 1) / page * page;
  if (guard.entered()) record_alloc(p, owned, __builtin_return_address(0));
  else if (guard.in_handler()) record_alloc_in_handler(p, owned, __builtin_return_address(0));
  return p;
}

SPOOR_INTERPOSE void* reallocarray(void* old, size_t count, size_t size) {
  ReentryGuard guard;
  void* p = call_real(guard, resolve(g_reallocarray, "reallocarray"), old, count, size);
  size_t bytes = 0;
  if (p == nullptr || __builtin_mul_overflow(count, size, &bytes)) return p;
  if (guard.entered()) record_realloc(old, p, bytes, __builtin_return_address(0));
  else if (guard.in_handler()) record_realloc_in_handler(old, p, bytes, __builtin_return_address(0));
  return p;
}

}  // extern "C"
