// The loader's lock (loader_lock.h): found once in _rtld_global, read by
// the sample handler.
#include "loader_lock.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace spoor::preload {
namespace {

std::atomic<const pthread_mutex_t*> g_loader_lock{nullptr};

pid_t thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

struct Scan {
  const unsigned char* base;
  size_t size;
  pid_t self;
  const pthread_mutex_t* found;
  int matches;
};

// Inside the callback the loader holds its write lock for this thread:
// the one recursive mutex of _rtld_global owned by it with a count of 1.
int scan_held_mutexes(dl_phdr_info*, size_t, void* data) {
  auto* s = static_cast<Scan*>(data);
  for (size_t at = 0; at + sizeof(pthread_mutex_t) <= s->size; at += alignof(pthread_mutex_t)) {
    const auto* m = reinterpret_cast<const pthread_mutex_t*>(s->base + at);
    if (m->__data.__lock != 0 && m->__data.__owner == s->self && m->__data.__count == 1 &&
        (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP) {
      s->found = m;
      ++s->matches;
    }
  }
  return 1;  // once is enough
}

}  // namespace

bool find_loader_lock() {
  if (g_loader_lock.load() != nullptr) return true;
  void* global = dlsym(RTLD_DEFAULT, "_rtld_global");
  Dl_info info{};
  void* entry = nullptr;  // the ElfW(Sym), for the object's size
  if (global == nullptr || dladdr1(global, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return false;
  Scan scan{static_cast<const unsigned char*>(global), static_cast<const ElfW(Sym)*>(entry)->st_size, thread_id(),
            nullptr, 0};
  dl_iterate_phdr(scan_held_mutexes, &scan);
  if (scan.matches != 1) return false;
  g_loader_lock.store(scan.found);
  return true;
}

bool mutex_half_taken(const pthread_mutex_t* mutex, pid_t self) {
  const int lock = __atomic_load_n(&mutex->__data.__lock, __ATOMIC_RELAXED);
  const int owner = __atomic_load_n(&mutex->__data.__owner, __ATOMIC_RELAXED);
  const unsigned count = __atomic_load_n(&mutex->__data.__count, __ATOMIC_RELAXED);
  return lock != 0 && (owner == 0 || (owner == self && count == 0));
}

bool loader_lock_half_taken() {
  const pthread_mutex_t* lock = g_loader_lock.load(std::memory_order_relaxed);
  return lock != nullptr && mutex_half_taken(lock, thread_id());
}

const pthread_mutex_t* loader_lock() { return g_loader_lock.load(); }

void set_loader_lock(const pthread_mutex_t* mutex) { g_loader_lock.store(mutex); }

}  // namespace spoor::preload
