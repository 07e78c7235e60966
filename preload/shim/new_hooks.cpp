// Interposed global operator new and delete, every variant (plain, array,
// nothrow, aligned, sized). Each records one Alloc or Free and forwards to
// the next definition (libstdc++'s, or a program's replacement library),
// holding the reentry guard so the malloc/free that libstdc++'s operators
// call are not counted a second time.
//
// Built with exceptions: a throwing operator new (std::bad_alloc) must run
// the guard's destructor on its way out.
#include <atomic>
#include <cstddef>
#include <new>

#include "heap_provider.h"
#include "heap_record.h"
#include "next_symbol.h"
#include "reentry_guard.h"

using namespace spoor::preload;

#define SPOOR_INTERPOSE __attribute__((visibility("default")))

// One allocating operator: the signature after the size, the mangled name
// of the next definition, and the arguments to forward.
#define SPOOR_NEW(op, mangled, params, args)                                   \
  SPOOR_INTERPOSE void* op(std::size_t size params) {                          \
    using Fn = void* (*)(std::size_t params);                                  \
    static std::atomic<Fn> slot{nullptr};                                      \
    ReentryGuard guard;                                                        \
    void* p = next_symbol(slot, mangled)(size args);                                  \
    if (guard.entered() && p != nullptr) record_alloc(p, size);                \
    return p;                                                                  \
  }

#define SPOOR_DELETE(op, mangled, params, args)                                \
  SPOOR_INTERPOSE void op(void* p params) noexcept {                           \
    using Fn = void (*)(void* params);                                         \
    static std::atomic<Fn> slot{nullptr};                                      \
    ReentryGuard guard;                                                        \
    if (guard.entered() && p != nullptr) record_free(p);                       \
    next_symbol(slot, mangled)(p args);                                               \
  }

#define SPOOR_COMMA ,

SPOOR_NEW(operator new, "_Znwm", , )
SPOOR_NEW(operator new[], "_Znam", , )
SPOOR_NEW(operator new, "_ZnwmRKSt9nothrow_t", SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA t)
SPOOR_NEW(operator new[], "_ZnamRKSt9nothrow_t", SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA t)
SPOOR_NEW(operator new, "_ZnwmSt11align_val_t", SPOOR_COMMA std::align_val_t a, SPOOR_COMMA a)
SPOOR_NEW(operator new[], "_ZnamSt11align_val_t", SPOOR_COMMA std::align_val_t a, SPOOR_COMMA a)
SPOOR_NEW(operator new, "_ZnwmSt11align_val_tRKSt9nothrow_t",
          SPOOR_COMMA std::align_val_t a SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA a SPOOR_COMMA t)
SPOOR_NEW(operator new[], "_ZnamSt11align_val_tRKSt9nothrow_t",
          SPOOR_COMMA std::align_val_t a SPOOR_COMMA const std::nothrow_t& t, SPOOR_COMMA a SPOOR_COMMA t)

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
