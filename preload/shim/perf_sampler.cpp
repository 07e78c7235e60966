// The task-clock sampler: perf_sampler.h says what and why.
#include "perf_sampler.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "high_descriptors.h"
#include "thread_cpu_time.h"

namespace spoor::preload {

namespace {

// The events of the process's sampled threads, so that a fork child can
// close the copies of its parent's. A slot is taken by a thread's start
// and given back by its end.
struct Slot {
  std::atomic<int> fd{-1};
};
constinit Slot g_slots[kMaxPerfThreads];

// high_descriptor_floor() under a soft RLIMIT_NOFILE of 256.
constexpr int kLowestFloor = 256 - 64;

// Cleared when the kernel refuses the event for a reason every thread
// would meet (permission, no perf events, kernel time not allowed): the
// next threads go straight to the timer.
constinit std::atomic<bool> g_usable{true};

constinit thread_local int t_fd __attribute__((tls_model("initial-exec"))) = -1;
constinit thread_local int t_slot __attribute__((tls_model("initial-exec"))) = -1;
constinit thread_local uint64_t t_event_id __attribute__((tls_model("initial-exec"))) = 0;
// The descriptor this thread's signals name, kept after stop: a signal
// raised before it may still be pending.
constinit thread_local int t_signal_fd __attribute__((tls_model("initial-exec"))) = -1;
// The thread's event could not be set up (no descriptor free at the top,
// a failed fcntl): its timer stays.
constinit thread_local bool t_failed __attribute__((tls_model("initial-exec"))) = false;
// The thread's CPU time when its clock was last armed.
constinit thread_local uint64_t t_armed_ns __attribute__((tls_model("initial-exec"))) = 0;

bool refused_for_every_thread(int error) {
  return error == EACCES || error == EPERM || error == ENOSYS || error == ENOENT || error == EINVAL ||
         error == EOPNOTSUPP || error == ENODEV;
}

// Whether `fd` is still the event whose id is `id` (and not a number the
// program closed and reused, for a file or an event of its own).
bool still_the_event(int fd, uint64_t id) {
  uint64_t now = 0;
  return fd >= 0 && syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &now) == 0 && now == id;
}

// Whether a slot looked free (a thread may take it first: take_slot).
bool free_slot_seen() {
  for (const Slot& slot : g_slots)
    if (slot.fd.load(std::memory_order_relaxed) < 0) return true;
  return false;
}

int take_slot(int fd) {
  for (int i = 0; i < kMaxPerfThreads; ++i) {
    int empty = -1;
    if (g_slots[i].fd.compare_exchange_strong(empty, fd, std::memory_order_relaxed)) return i;
  }
  return -1;
}

}  // namespace

bool perf_sampler_owns(int fd) {
  for (const Slot& slot : g_slots)
    if (slot.fd.load(std::memory_order_relaxed) == fd) return true;
  return false;
}

bool start_perf_sampling(long period_ns, int signal) {
  if (!g_usable.load(std::memory_order_relaxed) || t_fd >= 0 || t_failed || !free_slot_seen()) return false;
  // Whatever fails from here on fails for this thread: not tried again.
  t_failed = true;
  // Up at the top of the range, or not at all: a sampler must not take a
  // number the program's next open() would get. Under a limit below 256
  // the top is too narrow to share (the shim keeps 8 numbers there).
  const int floor = high_descriptor_floor();
  if (floor < kLowestFloor) return false;
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = static_cast<uint64_t>(period_ns);
  attr.disabled = 1;  // armed below, once the signal has somewhere to go
  const long opened = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (opened < 0) {
    if (refused_for_every_thread(errno)) g_usable.store(false, std::memory_order_relaxed);
    return false;
  }
  const int fd = move_descriptor_up(static_cast<int>(opened));
  int slot = -1;
  uint64_t id = 0;
  f_owner_ex owner{F_OWNER_TID, static_cast<pid_t>(syscall(SYS_gettid))};
  const bool ready = fd >= floor && (slot = take_slot(fd)) >= 0 &&
                     syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &id) == 0 &&
                     syscall(SYS_fcntl, fd, F_SETSIG, signal) == 0 &&
                     syscall(SYS_fcntl, fd, F_SETOWN_EX, &owner) == 0 &&
                     syscall(SYS_fcntl, fd, F_SETFL, O_ASYNC) == 0;
  if (!ready) {
    if (slot >= 0) g_slots[slot].fd.store(-1, std::memory_order_relaxed);
    syscall(SYS_close, fd);
    return false;
  }
  t_failed = false;
  t_fd = t_signal_fd = fd;
  t_slot = slot;
  t_event_id = id;
  t_armed_ns = own_thread_cpu_ns();
  if (syscall(SYS_ioctl, fd, PERF_EVENT_IOC_REFRESH, 1) != 0) {
    stop_perf_sampling();
    return false;
  }
  return true;
}

bool perf_sampling_active() { return t_fd >= 0; }

bool is_perf_sample_signal(const siginfo_t* info) {
  // An event armed for one overflow signals POLL_HUP; POLL_IN otherwise.
  return info != nullptr && t_signal_fd >= 0 && (info->si_code == POLL_HUP || info->si_code == POLL_IN) &&
         info->si_fd == t_signal_fd;
}

uint32_t perf_sample_periods(long period_ns) {
  const uint64_t now = own_thread_cpu_ns();
  const int64_t elapsed = static_cast<int64_t>(now - t_armed_ns);
  t_armed_ns = now;
  if (t_fd >= 0) syscall(SYS_ioctl, t_fd, PERF_EVENT_IOC_REFRESH, 1);
  const int64_t periods = (elapsed + period_ns / 2) / period_ns;
  return periods < 1 ? 1u : static_cast<uint32_t>(periods);
}

void stop_perf_sampling() {
  const int fd = t_fd;
  if (fd < 0) return;
  t_fd = -1;
  if (still_the_event(fd, t_event_id)) syscall(SYS_close, fd);
  if (t_slot >= 0) g_slots[t_slot].fd.store(-1, std::memory_order_relaxed);
  t_slot = -1;
}

void forget_perf_samplers_in_child() {
  // Right after fork nothing has reused the copies' numbers yet.
  for (Slot& s : g_slots) {
    const int fd = s.fd.exchange(-1, std::memory_order_relaxed);
    if (fd >= 0) syscall(SYS_close, fd);
  }
  t_fd = t_signal_fd = t_slot = -1;
  t_failed = false;
}

}  // namespace spoor::preload
