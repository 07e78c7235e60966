// The command line every workload takes: [--iterations=N] [--threads=T].
#ifndef SPOOR_BENCH_WORKLOAD_ARGS_H
#define SPOOR_BENCH_WORKLOAD_ARGS_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spoor::bench {

inline bool parse_flag(const char* arg, const char* name, uint64_t* out) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  char* end = nullptr;
  *out = std::strtoull(arg + n + 1, &end, 10);
  return end != arg + n + 1 && *end == '\0';
}

// Reads the flags over the defaults in *iterations and *threads (threads
// outside 1..64 become 1). False, with the usage printed, on anything else.
inline bool parse_workload_args(int argc, char** argv, uint64_t* iterations, uint64_t* threads) {
  for (int i = 1; i < argc; ++i) {
    if (!parse_flag(argv[i], "--iterations", iterations) && !parse_flag(argv[i], "--threads", threads)) {
      std::fprintf(stderr, "usage: %s [--iterations=N] [--threads=T]\n", argv[0]);
      return false;
    }
  }
  if (*threads < 1 || *threads > 64) *threads = 1;
  return true;
}

}  // namespace spoor::bench

#endif  // SPOOR_BENCH_WORKLOAD_ARGS_H
