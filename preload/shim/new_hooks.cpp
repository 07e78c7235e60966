// Interposed global operator new and delete, every variant (plain, array,
// nothrow, aligned, sized). Each records one Alloc or Free and forwards to
// the next definition (libstdc++'s, or a program's replacement library),
// holding the reentry guard so the malloc/free that libstdc++'s operators
// call are not counted a second time.
//
// Built with exceptions: a throwing operator new (std::bad_alloc) must run
// the guard's destructor on its way out.
//
// The shim carries its own copy of libstdc++ (linked statically, hidden),
// so a C program loads no libstdc++ and there is no next definition: the
// shim's own allocations then take the fallbacks below, which do what
// libstdc++'s operators do (malloc, the new handler, bad_alloc). The next
// definition is looked up again on each such call, so a libstdc++ (or a
// replacement) loaded later is used from then on.
#include <dlfcn.h>
#include <link.h>
#include <locale.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "heap_provider.h"
#include "heap_record.h"
#include "reentry_guard.h"

using namespace spoor::preload;

namespace {

// Clears a failed lookup's error without translating it: dlerror() puts
// its message through gettext in the thread's locale, which in a program
// that called setlocale (bash) means a search of libc's catalogs, three
// failed opens and ~0.1 ms here, in each of a shell's fork children (its
// dlopens since attach make each child look again). The message is thrown
// away, so it is taken in the C locale (glibc's own object: no allocation).
void take_dl_error_untranslated() {
  const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  const locale_t previous = c_locale != static_cast<locale_t>(nullptr) ? uselocale(c_locale) : nullptr;
  (void)dlerror();
  if (previous != static_cast<locale_t>(nullptr)) uselocale(previous);
}

// next_symbol, except that a definition found missing is looked for again
// only once the loader has added objects since (one dl_iterate_phdr step,
// ~0.1 us, instead of a failed dlsym's walk over every object). A failed
// lookup's error message is taken, so the program's dlerror never sees it.
template <class Fn>
Fn next_definition(std::atomic<Fn>& slot, std::atomic<unsigned long long>& missing_at, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;  // the counter is the same in every entry
      },
      &adds);
  if (missing_at.load(std::memory_order_relaxed) == adds + 1) return nullptr;
  resolve_real_free();
  fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) {
    take_dl_error_untranslated();
    missing_at.store(adds + 1, std::memory_order_relaxed);  // + 1: 0 is "never looked"
    return nullptr;
  }
  slot.store(fn, std::memory_order_release);
  return fn;
}

void* fallback_new(std::size_t size, std::size_t alignment) {
  if (size == 0) size = 1;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  for (;;) {
    void* p = nullptr;
    if (alignment == sizeof(void*) ? (p = std::malloc(size)) != nullptr : posix_memalign(&p, alignment, size) == 0)
      return p;
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* fallback_new_nothrow(std::size_t size, std::size_t alignment) noexcept {
  try {
    return fallback_new(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

// One allocating operator: the signature after the size, the mangled name
// of the next definition, and the arguments to forward.
// `fallback`: the call when no next definition is loaded.
#define SPOOR_NEW(op, mangled, params, args, fallback)                         \
  SPOOR_INTERPOSE void* op(std::size_t size params) {                          \
    using Fn = void* (*)(std::size_t params);                                  \
    static std::atomic<Fn> slot{nullptr};                                      \
    static std::atomic<unsigned long long> missing_at{0};                      \
    ReentryGuard guard;                                                        \
    const Fn next = next_definition(slot, missing_at, mangled);                \
    void* p;                                                                   \
    {                                                                          \
      const RealCall real(guard);                                              \
      p = next != nullptr ? next(size args) : fallback;                        \
    }                                                                          \
    if (p == nullptr) return p;                                                \
    if (guard.entered()) record_alloc(p, size, __builtin_return_address(0));   \
    else if (guard.in_handler())                                               \
      record_alloc_in_handler(p, size, __builtin_return_address(0));           \
    return p;                                                                  \
  }

// Without a next definition, what the fallbacks allocated goes to free.
#define SPOOR_DELETE(op, mangled, params, args)                                \
  SPOOR_INTERPOSE void op(void* p params) noexcept {                           \
    using Fn = void (*)(void* params);                                         \
    static std::atomic<Fn> slot{nullptr};                                      \
    static std::atomic<unsigned long long> missing_at{0};                      \
    ReentryGuard guard;                                                        \
    if (guard.entered() && p != nullptr) record_free(p);                       \
    else if (guard.in_handler() && p != nullptr) record_free_in_handler(p);    \
    const Fn next = next_definition(slot, missing_at, mangled);                \
    const RealCall real(guard);                                                \
    if (next != nullptr) next(p args);                                         \
    else std::free(p);                                                         \
  }

#define SPOOR_COMMA ,

#define SPOOR_ALIGN static_cast<std::size_t>(a)

SPOOR_NEW(operator new, "_Znwm", , , fallback_new(size, 0))
SPOOR_NEW(operator new[], "_Znam", , , fallback_new(size, 0))
SPOOR_NEW(operator new, "_ZnwmRKSt9nothrow_t", SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA t,
          fallback_new_nothrow(size, 0))
SPOOR_NEW(operator new[], "_ZnamRKSt9nothrow_t", SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA t,
          fallback_new_nothrow(size, 0))
SPOOR_NEW(operator new, "_ZnwmSt11align_val_t", SPOOR_COMMA std::align_val_t a, SPOOR_COMMA a,
          fallback_new(size, SPOOR_ALIGN))
SPOOR_NEW(operator new[], "_ZnamSt11align_val_t", SPOOR_COMMA std::align_val_t a, SPOOR_COMMA a,
          fallback_new(size, SPOOR_ALIGN))
SPOOR_NEW(operator new, "_ZnwmSt11align_val_tRKSt9nothrow_t",
          SPOOR_COMMA std::align_val_t a SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA a SPOOR_COMMA t,
          fallback_new_nothrow(size, SPOOR_ALIGN))
SPOOR_NEW(operator new[], "_ZnamSt11align_val_tRKSt9nothrow_t",
          SPOOR_COMMA std::align_val_t a SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA a SPOOR_COMMA t,
          fallback_new_nothrow(size, SPOOR_ALIGN))

SPOOR_DELETE(operator delete, "_ZdlPv", , )
SPOOR_DELETE(operator delete[], "_ZdaPv", , )
SPOOR_DELETE(operator delete, "_ZdlPvRKSt9nothrow_t", SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA t)
SPOOR_DELETE(operator delete[], "_ZdaPvRKSt9nothrow_t", SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA t)
SPOOR_DELETE(operator delete, "_ZdlPvm", SPOOR_COMMA std::size_t n, SPOOR_COMMA n)
SPOOR_DELETE(operator delete[], "_ZdaPvm", SPOOR_COMMA std::size_t n, SPOOR_COMMA n)
SPOOR_DELETE(operator delete, "_ZdlPvSt11align_val_t", SPOOR_COMMA std::align_val_t a, SPOOR_COMMA a)
SPOOR_DELETE(operator delete[], "_ZdaPvSt11align_val_t", SPOOR_COMMA std::align_val_t a, SPOOR_COMMA a)
SPOOR_DELETE(operator delete, "_ZdlPvSt11align_val_tRKSt9nothrow_t",
             SPOOR_COMMA std::align_val_t a SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA a SPOOR_COMMA t)
SPOOR_DELETE(operator delete[], "_ZdaPvSt11align_val_tRKSt9nothrow_t",
             SPOOR_COMMA std::align_val_t a SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA a SPOOR_COMMA t)
SPOOR_DELETE(operator delete, "_ZdlPvmSt11align_val_t", SPOOR_COMMA std::size_t n SPOOR_COMMA std::align_val_t a,
             SPOOR_COMMA n SPOOR_COMMA a)
SPOOR_DELETE(operator delete[], "_ZdaPvmSt11align_val_t", SPOOR_COMMA std::size_t n SPOOR_COMMA std::align_val_t a,
             SPOOR_COMMA n SPOOR_COMMA a)
