// spoor_workload_malloc_heavy: an allocation-bound program to run untraced
// and under `spoor record`, to measure what tracing the heap with full
// stacks costs a whole process. Each iteration replaces one block of a live
// set of 1024 (mixed sizes, mostly small: malloc + free) through one of
// several call paths of different depths; every 11th iteration also inserts
// into and erases from a std::map, and every 64th builds a std::string and
// grows a std::vector. About 1.09 allocator calls per iteration.
//
//   spoor_workload_malloc_heavy [--iterations=N] [--threads=T]
//                               (default: 1000000, 1)
//
// Prints one line: iterations, threads, wall seconds of the loop, ns per
// iteration (per thread), and the CPU time of the whole process (all its
// threads, from start to exit of the loop), which another program's load
// on the machine disturbs less than wall time. Exit status 0; 2 for bad
// arguments.
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "workload_args.h"

namespace {

constexpr int kLive = 1024;

struct Worker {
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  void* live[kLive] = {};
  std::map<uint64_t, uint64_t> index;
  std::vector<std::string> names;

  uint64_t next() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  }

  // Mostly small blocks, some medium, a few of a few KiB.
  size_t size_for(uint64_t r) {
    const unsigned bucket = r & 15;
    if (bucket < 12) return 16 + (r >> 8) % 112;
    if (bucket < 15) return 128 + (r >> 8) % 896;
    return 1024 + (r >> 8) % 7168;
  }
};

// Distinct call paths, so the trace holds several stacks of different depths.
__attribute__((noinline)) void replace_block(Worker& w, uint64_t r) {
  const int slot = static_cast<int>((r >> 20) % kLive);
  std::free(w.live[slot]);
  void* p = std::malloc(w.size_for(r));
  std::memset(p, 0, 8);
  w.live[slot] = p;
}
__attribute__((noinline)) void replace_via_parse(Worker& w, uint64_t r) {
  replace_block(w, r);
  __asm__ volatile("" ::: "memory");  // keeps the frame: no tail call
}
__attribute__((noinline)) void replace_via_cache(Worker& w, uint64_t r) {
  replace_via_parse(w, r);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void replace_via_request(Worker& w, uint64_t r) {
  replace_via_cache(w, r);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void touch_index(Worker& w, uint64_t r) {
  w.index.emplace(r, r >> 3);  // one node allocation
  if (w.index.size() > 512) w.index.erase(w.index.begin());
}

__attribute__((noinline)) void touch_names(Worker& w, uint64_t r) {
  w.names.emplace_back("a name long enough to live on the heap #" + std::to_string(r & 1023));
  if (w.names.size() > 256) w.names.clear();
}

__attribute__((noinline)) void step(Worker& w, uint64_t i) {
  const uint64_t r = w.next();
  switch (i & 3) {
    case 0: replace_block(w, r); break;
    case 1: replace_via_parse(w, r); break;
    case 2: replace_via_cache(w, r); break;
    default: replace_via_request(w, r); break;
  }
  if (i % 11 == 0) touch_index(w, r);
  if (i % 64 == 0) touch_names(w, r);
}

void run(Worker* w, uint64_t iterations) {
  for (uint64_t i = 0; i < iterations; ++i) step(*w, i);
  for (void*& p : w->live) {
    std::free(p);
    p = nullptr;
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t iterations = 1000000, threads = 1;
  if (!spoor::bench::parse_workload_args(argc, argv, &iterations, &threads)) return 2;
  std::vector<Worker*> workers;
  for (uint64_t t = 0; t < threads; ++t) {
    workers.push_back(new Worker);
    workers.back()->rng += t * 0x1234567ull;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (uint64_t t = 1; t < threads; ++t) pool.emplace_back(run, workers[t], iterations);
  run(workers[0], iterations);
  for (std::thread& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  std::printf("malloc_heavy: iterations=%llu threads=%llu seconds=%.3f ns_per_iteration=%.1f cpu_seconds=%.3f\n",
              static_cast<unsigned long long>(iterations), static_cast<unsigned long long>(threads), seconds,
              seconds * 1e9 / static_cast<double>(iterations), cpu);
  for (Worker* w : workers) delete w;
  return 0;
}
