// release_events: a recording's perf events closed, the tracepoints' slow
// teardown left to a child that holds nothing else.
#include "spoor/kernelsrc/event_release.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "spoor/kernelsrc/tracefs.h"

namespace spoor::kernelsrc {
namespace {

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

// A sched_switch event of this process, or -1 with *why.
int open_sched_switch(std::string* why) {
  Tracefs tracefs;
  const TracepointId id = tracefs.lookup("sched", "sched_switch");
  if (!id.error.empty()) {
    *why = id.error;
    return -1;
  }
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_TRACEPOINT;
  a.config = id.id;
  a.sample_period = 1;
  a.disabled = 1;
  const long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) *why = std::string("perf_event_open of sched:sched_switch: ") + std::strerror(errno);
  return static_cast<int>(fd);
}

TEST(EventRelease, TheChildKeepsOnlyTheDescriptorsItWasGiven) {
  int keep_a[2], drop[2], keep_b[2];
  ASSERT_EQ(pipe(keep_a), 0);
  ASSERT_EQ(pipe(drop), 0);
  ASSERT_EQ(pipe(keep_b), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::vector<int> keep = {keep_a[1], keep_b[0]};
    std::sort(keep.begin(), keep.end());
    close_all_but(keep);
    // Exit code: one bit per descriptor found in the wrong state.
    int wrong = 0;
    if (!is_open(keep_a[1])) wrong |= 1;
    if (!is_open(keep_b[0])) wrong |= 2;
    if (is_open(drop[0]) || is_open(drop[1])) wrong |= 4;
    if (is_open(keep_a[0]) || is_open(keep_b[1])) wrong |= 8;
    if (is_open(0) || is_open(1) || is_open(2)) wrong |= 16;
    _exit(wrong);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a kept end closed, 2: the other, 4: a dropped pipe open, "
                                       "8: the kept pipes' other ends open, 16: stdin, stdout or stderr open";
}

TEST(EventRelease, EventsWithoutATracepointAreClosedHere) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.exclude_kernel = 1;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) GTEST_SKIP() << "perf_event_open: " << std::strerror(errno);
  EXPECT_EQ(release_events({fd}, false), 0);
  EXPECT_FALSE(is_open(fd));
}

TEST(EventRelease, ATracepointIsClosedByAChild) {
  std::string why;
  const int fd = open_sched_switch(&why);
  if (fd < 0) GTEST_SKIP() << why;
  const pid_t child = release_events({fd}, true);
  ASSERT_GT(child, 0);
  EXPECT_FALSE(is_open(fd));
  // While it lives (its close waits for the kernel), the child holds the
  // event and its gate's read end, nothing of this process's others
  // (close_all_but is checked above on its own).
  const std::string dir = "/proc/" + std::to_string(child) + "/fd/";
  for (int i = 0; i < 1024; ++i) {
    char link[256];
    const ssize_t n = readlink((dir + std::to_string(i)).c_str(), link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = '\0';
    const std::string target = link;
    EXPECT_TRUE(target == "anon_inode:[perf_event]" || target.rfind("pipe:", 0) == 0)
        << "descriptor " << i << " of the child: " << target;
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace spoor::kernelsrc
