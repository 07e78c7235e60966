#include "recorder_wake.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace spoor::record {
namespace {

// The pipe's write end, for the handlers; -1 while no wake is open.
std::atomic<int> g_wake_write_fd{-1};

void on_child(int) { wake_recorder(); }

}  // namespace

void wake_recorder() {
  const int fd = g_wake_write_fd.load(std::memory_order_relaxed);
  if (fd < 0) return;
  const int saved = errno;
  const char byte = 0;
  // A full pipe already holds a wake: EAGAIN loses nothing.
  (void)!write(fd, &byte, 1);
  errno = saved;
}

bool RecorderWake::open(std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return false;
  }
  read_fd_ = fds[0];
  g_wake_write_fd.store(fds[1]);
  struct sigaction on{};
  on.sa_handler = on_child;
  // Stops and continues are not ends: no wake for them.
  on.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&on.sa_mask);
  installed_ = sigaction(SIGCHLD, &on, &given_) == 0;
  return true;
}

void RecorderWake::clear() const {
  char bytes[64];
  while (read(read_fd_, bytes, sizeof bytes) > 0) {
  }
}

void RecorderWake::restore_in_child() const {
  if (installed_) sigaction(SIGCHLD, &given_, nullptr);
}

RecorderWake::~RecorderWake() {
  if (read_fd_ < 0) return;
  if (installed_) sigaction(SIGCHLD, &given_, nullptr);
  const int write_fd = g_wake_write_fd.exchange(-1);
  close(write_fd);
  close(read_fd_);
}

}  // namespace spoor::record
