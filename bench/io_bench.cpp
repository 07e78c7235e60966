// spoor_bench_io: what Spoor.IO's hooks add to a file call. Times N calls
// of one kind in a loop and prints the mean wall time per call; run it
// plain and under spoor record with different enable specs, the difference
// is the hook's cost:
//
//   spoor_bench_io read 2000000                                 # no shim
//   spoor record -p Spoor.Heap -- spoor_bench_io read 2000000   # IO off
//   spoor record -p Spoor.IO:0x1 -- spoor_bench_io read 2000000 # fd events
//   spoor record -p 'Spoor.IO:0x5,Spoor.Stack' -- ...           # + stacks
//
// Kinds: read (1 byte from /dev/zero: the cheapest real system call on a
// file), fwrite (16 bytes to a buffered /dev/null stream: no system call in
// most calls, so the hook's share is the largest), syscall (getppid through
// syscall(), which the shim stands in for: what every other system call
// made that way pays). Prints one line:
//
//   spoor_bench_io: kind=read calls=2000000 ns_per_call=... cpu_ns_per_call=...
//
// (wall time and the thread's CPU time per call).
//
// A benchmark, not a test: it exits 0 whatever it measured (2: bad usage).
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double now_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Wall and thread CPU time of a stretch of the program. The CPU time leaves
// out waiting for a CPU, which the recorder's drainer (another process)
// causes on a machine with few of them.
struct Timer {
  double wall = now_ns(CLOCK_MONOTONIC);
  double cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
  void stop() {
    wall = now_ns(CLOCK_MONOTONIC) - wall;
    cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "read") != 0 && std::strcmp(argv[1], "fwrite") != 0 &&
                    std::strcmp(argv[1], "syscall") != 0)) {
    std::fprintf(stderr, "usage: spoor_bench_io read|fwrite|syscall [CALLS]\n");
    return 2;
  }
  const bool reads = std::strcmp(argv[1], "read") == 0;
  const bool system_calls = std::strcmp(argv[1], "syscall") == 0;
  const long calls = argc > 2 ? std::atol(argv[2]) : 2000000;
  char buf[16] = {};
  Timer t;
  if (reads) {
    const int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0) return 2;
    t = Timer{};
    for (long i = 0; i < calls; ++i)
      if (read(fd, buf, 1) != 1) return 2;
    t.stop();
    close(fd);
  } else if (system_calls) {
    t = Timer{};
    for (long i = 0; i < calls; ++i)
      if (syscall(SYS_getppid) <= 0) return 2;
    t.stop();
  } else {
    FILE* f = std::fopen("/dev/null", "w");
    if (f == nullptr) return 2;
    t = Timer{};
    for (long i = 0; i < calls; ++i) std::fwrite(buf, 1, sizeof buf, f);
    t.stop();
    std::fclose(f);
  }
  const double n = static_cast<double>(calls);
  std::printf("spoor_bench_io: kind=%s calls=%ld ns_per_call=%.1f cpu_ns_per_call=%.1f\n", argv[1], calls,
              t.wall / n, t.cpu / n);
  return 0;
}
