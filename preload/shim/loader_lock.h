// The loader's lock, as a CPU sample's signal handler sees it.
//
// dl_iterate_phdr takes glibc's dl_load_write_lock, a recursive pthread
// mutex in the loader's _rtld_global, and libunwind calls it to find the
// unwind tables of a frame (the handler's walk falls back to libunwind
// where the shim's cached rules lack one). A handler that does so when
// the code it interrupted was taking or letting go of that lock waits for
// its own thread forever: between the lock word and the owner being set
// (or cleared) the thread is not the owner, or is with a count of 0, and
// the lock is taken. The handler asks first and walks without libunwind
// then (the sample keeps the frames the cached rules give).
#ifndef SPOOR_PRELOAD_LOADER_LOCK_H
#define SPOOR_PRELOAD_LOADER_LOCK_H

#include <pthread.h>
#include <sys/types.h>

namespace spoor::preload {

// Finds the lock: the one mutex in _rtld_global that this thread holds
// once inside a dl_iterate_phdr callback. Call where the program holds no
// lock of its own (takes the loader's lock); idempotent. Returns whether
// it is known (false on a C library laid out otherwise: the handler then
// walks as before).
bool find_loader_lock();

// Whether `mutex`, a recursive one, is taken but not whole: no owner yet
// (or no more), or `self` its owner with a count of 0. Plain loads:
// async-signal-safe.
bool mutex_half_taken(const pthread_mutex_t* mutex, pid_t self);

// mutex_half_taken of the loader's lock for the calling thread; false
// when find_loader_lock did not find it. Any context.
bool loader_lock_half_taken();

// The lock find_loader_lock found, or null.
const pthread_mutex_t* loader_lock();

// Makes `mutex` the lock loader_lock_half_taken reads (tests: a mutex in
// a state the loader's own cannot safely be put in).
void set_loader_lock(const pthread_mutex_t* mutex);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_LOADER_LOCK_H
