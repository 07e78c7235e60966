// Whether this test run may use perf_event_open at all: the kernel-source
// end-to-end tests (tests/kernelsrc, tests/report) skip with the reason
// when it is refused (perf_event_paranoid, a container's seccomp policy).
#ifndef SPOOR_TESTS_PRELOAD_PERF_ACCESS_H
#define SPOOR_TESTS_PRELOAD_PERF_ACCESS_H

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace spoor::test {

// Why perf_event_open cannot be used here, or "": opens (and closes) a
// dummy software event on this thread, user side only, the least any
// kernel source needs.
inline std::string perf_unavailable() {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.exclude_kernel = 1;
  const long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd < 0) return std::string("perf_event_open is not allowed here: ") + std::strerror(errno);
  close(static_cast<int>(fd));
  return "";
}

}  // namespace spoor::test

// In a gtest test: skip it, saying why, where perf_event_open is refused.
#define SKIP_WITHOUT_PERF()                                        \
  do {                                                             \
    const std::string why = spoor::test::perf_unavailable();       \
    if (!why.empty()) GTEST_SKIP() << why;                         \
  } while (0)

#endif  // SPOOR_TESTS_PRELOAD_PERF_ACCESS_H
