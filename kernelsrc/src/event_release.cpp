#include "spoor/kernelsrc/event_release.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace spoor::kernelsrc {
namespace {

// close_range where the kernel has it (5.9), else one close per number.
void close_from_to(unsigned first, unsigned last) {
  if (close_range(first, last, 0) == 0 || errno != ENOSYS) return;
  rlimit limit{};
  const unsigned most = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 1u << 20
                            ? static_cast<unsigned>(limit.rlim_cur) : 1u << 20;
  for (unsigned fd = first; fd <= last && fd < most; ++fd) close(static_cast<int>(fd));
}
}  // namespace

void close_all_but(const std::vector<int>& keep) {
  unsigned first = 0;
  for (const int fd : keep) {
    if (static_cast<unsigned>(fd) > first) close_from_to(first, static_cast<unsigned>(fd) - 1);
    first = static_cast<unsigned>(fd) + 1;
  }
  close_from_to(first, ~0u);
}

pid_t release_events(std::vector<int> fds, bool tracepoints) {
  for (const int fd : fds) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  // gate: EOF for the child once this process has closed its copies of
  // the events; ready: EOF for this process once the child holds nothing
  // but them and the gate.
  int gate[2] = {-1, -1}, ready[2] = {-1, -1};
  if (!tracepoints || fds.empty() || pipe2(gate, O_CLOEXEC) != 0) {
    for (const int fd : fds) close(fd);
    return 0;
  }
  if (pipe2(ready, O_CLOEXEC) != 0) {
    close(gate[0]);
    close(gate[1]);
    for (const int fd : fds) close(fd);
    return 0;
  }
  std::vector<int> keep = fds;
  keep.push_back(gate[0]);
  std::sort(keep.begin(), keep.end());
  const pid_t child = fork();
  if (child == 0) {
    // A terminal's Ctrl-C for the next command must not find it; killed
    // any other way, the kernel closes the events all the same.
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    prctl(PR_SET_NAME, "spoor-release");
    // Background work: not at the drain's raised priority it was forked from.
    setpriority(PRIO_PROCESS, 0, 19);
    close_all_but(keep);
    close(ready[1]);  // closed above already; said again, as the parent waits for it
    char byte;
    while (read(gate[0], &byte, 1) < 0 && errno == EINTR) {
    }
    for (const int fd : fds) close(fd);  // the last references: the slow closes
    _exit(0);
  }
  close(gate[0]);
  close(ready[1]);
  if (child > 0) {
    char byte;
    while (read(ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  close(ready[0]);
  for (const int fd : fds) close(fd);
  close(gate[1]);
  return child < 0 ? 0 : child;  // no child: the closes above were the last ones, paid here
}

}  // namespace spoor::kernelsrc
