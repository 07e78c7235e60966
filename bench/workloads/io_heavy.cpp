// spoor_workload_io_heavy: an I/O-bound program to run untraced and under a
// tracer, to measure what tracing costs a program that makes many small
// system calls and few allocations. Each thread owns a temporary file: every
// iteration write()s a 64-byte record to it, every 4th also pread()s an
// earlier record back, and every 4096th truncates the file and starts it
// again, so that it stays in the page cache (at most 256 KiB).
//
//   spoor_workload_io_heavy [--iterations=N] [--threads=T]
//                           (default: 200000, 1)
//
// Prints one line: iterations, threads, seconds of the loop and ns per
// iteration (per thread). Exit status 0; 1 when a file operation fails;
// 2 for bad arguments.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "workload_args.h"

namespace {

constexpr size_t kRecord = 64;
constexpr uint64_t kRecordsPerFile = 4096;

std::atomic<bool> g_failed{false};

void run(uint64_t iterations, uint64_t seed) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/spoor-io-heavy-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    g_failed = true;
    return;
  }
  unlink(path.c_str());  // gone when closed, even if the run is killed
  char record[kRecord];
  char back[kRecord];
  std::memset(record, 'x', sizeof record);
  uint64_t rng = seed;
  uint64_t written = 0;  // records in the file
  for (uint64_t i = 0; i < iterations; ++i) {
    std::memcpy(record, &i, sizeof i);
    if (write(fd, record, kRecord) != static_cast<ssize_t>(kRecord)) g_failed = true;
    ++written;
    if (i % 4 == 3) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      const off_t at = static_cast<off_t>((rng % written) * kRecord);
      if (pread(fd, back, kRecord, at) != static_cast<ssize_t>(kRecord)) g_failed = true;
    }
    if (written == kRecordsPerFile) {
      if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) g_failed = true;
      written = 0;
    }
  }
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t iterations = 200000, threads = 1;
  if (!spoor::bench::parse_workload_args(argc, argv, &iterations, &threads)) return 2;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (uint64_t t = 1; t < threads; ++t) pool.emplace_back(run, iterations, 0x9E3779B97F4A7C15ull + t);
  run(iterations, 0x9E3779B97F4A7C15ull);
  for (std::thread& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("io_heavy: iterations=%llu threads=%llu seconds=%.3f ns_per_iteration=%.1f\n",
              static_cast<unsigned long long>(iterations), static_cast<unsigned long long>(threads), seconds,
              seconds * 1e9 / static_cast<double>(iterations));
  if (g_failed) std::fprintf(stderr, "io_heavy: a file operation failed\n");
  return g_failed ? 1 : 0;
}
