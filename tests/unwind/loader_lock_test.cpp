// loader_lock.h: the loader's write lock, found in _rtld_global, and the
// states in which a signal handler must not take it.
#include "loader_lock.h"

#include <gtest/gtest.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace spoor::preload {
namespace {

pid_t this_thread() { return static_cast<pid_t>(syscall(SYS_gettid)); }

struct Seen {
  int owner = 0;
  unsigned count = 0;
  bool half_taken = true;
};

// The lock is the one dl_iterate_phdr holds: this thread owns it inside
// the callback, and not outside; whole there, so not half taken.
TEST(LoaderLock, IsTheMutexDlIteratePhdrHolds) {
  ASSERT_TRUE(find_loader_lock()) << "glibc's _rtld_global holds a recursive mutex the callback owns";
  const pthread_mutex_t* lock = loader_lock();
  ASSERT_NE(lock, nullptr);
  Seen inside;
  dl_iterate_phdr(
      [](dl_phdr_info*, size_t, void* data) {
        auto* seen = static_cast<Seen*>(data);
        seen->owner = loader_lock()->__data.__owner;
        seen->count = loader_lock()->__data.__count;
        seen->half_taken = loader_lock_half_taken();
        return 1;
      },
      &inside);
  EXPECT_EQ(inside.owner, this_thread());
  EXPECT_GE(inside.count, 1u);
  EXPECT_FALSE(inside.half_taken);
  EXPECT_NE(lock->__data.__owner, this_thread());
  EXPECT_FALSE(loader_lock_half_taken());
  EXPECT_TRUE(find_loader_lock()) << "found again, the same";
  EXPECT_EQ(loader_lock(), lock);
}

// Half taken: the lock word set with no owner (between the two as it is
// taken, or let go), or this thread the owner with a count of 0 (the same
// moments of a recursive mutex). Whole, free, or another thread's: not.
TEST(LoaderLock, HalfTakenStates) {
  const pid_t self = this_thread();
  auto mutex = [](int lock, int owner, unsigned count) {
    pthread_mutex_t m = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    m.__data.__lock = lock;
    m.__data.__owner = owner;
    m.__data.__count = count;
    return m;
  };
  const pthread_mutex_t no_owner = mutex(1, 0, 0), count_zero = mutex(1, self, 0), held = mutex(1, self, 1),
                        free = mutex(0, 0, 0), others = mutex(2, self + 1, 1);
  EXPECT_TRUE(mutex_half_taken(&no_owner, self));
  EXPECT_TRUE(mutex_half_taken(&count_zero, self));
  EXPECT_FALSE(mutex_half_taken(&held, self));
  EXPECT_FALSE(mutex_half_taken(&free, self));
  EXPECT_FALSE(mutex_half_taken(&others, self));
}

}  // namespace
}  // namespace spoor::preload
