// The next definition of an interposed function in the lookup order (glibc's,
// or another preloaded library's), found with dlsym(RTLD_NEXT) on first use
// and kept in `slot`. Hooks call it on every call: one acquire load once
// resolved. (heap_hooks.cpp has its own, which serves dlsym's allocations
// from a bootstrap pool while it resolves.)
#ifndef SPOOR_PRELOAD_NEXT_SYMBOL_H
#define SPOOR_PRELOAD_NEXT_SYMBOL_H

#include <dlfcn.h>

#include <atomic>

namespace spoor::preload {

template <class Fn>
Fn next_symbol(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  slot.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_NEXT_SYMBOL_H
