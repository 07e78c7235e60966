// What wakes the recorder's poll besides its connections: a child ending
// (SIGCHLD) and the user stopping the wait (the recorder's signal
// handlers). With them the recorder may wait long while no traced image
// is open (drain_pace.h's kMostIdleWaitNothingOpenMs) and still reap, and
// end, at once.
#ifndef SPOOR_PRELOAD_RECORD_RECORDER_WAKE_H
#define SPOOR_PRELOAD_RECORD_RECORDER_WAKE_H

#include <signal.h>

#include <string>

namespace spoor::record {

class RecorderWake {
 public:
  RecorderWake() = default;
  RecorderWake(const RecorderWake&) = delete;
  RecorderWake& operator=(const RecorderWake&) = delete;
  // Restores SIGCHLD's disposition, closes the pipe.
  ~RecorderWake();

  // A non-blocking pipe, and a SIGCHLD handler that writes to it. A
  // recorder given SIGCHLD ignored (a parent that set SIG_IGN, inherited
  // across its exec) gets a handler all the same: with SIGCHLD ignored the
  // kernel reaps the program itself, and the recorder would never learn it
  // ended. False with *error set.
  bool open(std::string* error);

  // The pipe's read end, readable after a wake: for poll().
  int fd() const { return read_fd_; }
  // Empties the pipe; call after poll() returns.
  void clear() const;

  // In the program's child before its exec: SIGCHLD as spoor was given it,
  // so the program starts with what it would have alone (an ignored
  // SIGCHLD stays ignored across exec; a handler would not). Async-signal-
  // safe.
  void restore_in_child() const;

 private:
  int read_fd_ = -1;
  struct sigaction given_{};
  bool installed_ = false;
};

// Wakes the poll: for the recorder's own signal handlers. Async-signal-
// safe, errno kept; nothing before open().
void wake_recorder();

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_RECORDER_WAKE_H
