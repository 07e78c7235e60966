// capture_program OUT [COUNT] [DEPTH_MAX] [vdso]: takes COUNT samples
// (default 20) of itself while it spins at the bottom of call_chain.h's
// chain (with 0..DEPTH_MAX-1 recursive frames, default 4; with "vdso", in
// clock_gettime instead), and writes them with its module map to OUT
// (sample_capture.h's format).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "call_chain.h"
#include "sample_capture.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: capture_program OUT [COUNT] [DEPTH_MAX]\n");
    return 2;
  }
  const size_t count = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 20;
  const int depth_max = argc > 3 ? std::atoi(argv[3]) : 4;
  const bool vdso = argc > 4 && std::strcmp(argv[4], "vdso") == 0;
  spoor::testing::start_capture(count, 8192, 100);
  uint64_t sink = 0;
  for (size_t n; (n = spoor::testing::captured()) < count;)
    sink += (vdso ? offline_chain_a_vdso : offline_chain_a)(n + 1, static_cast<int>(n % static_cast<size_t>(depth_max)));
  spoor::testing::Capture c;
  c.samples = spoor::testing::stop_capture();
  c.modules = spoor::testing::own_modules();
  if (!spoor::testing::write_capture(argv[1], c)) {
    std::perror(argv[1]);
    return 1;
  }
  return sink == 42 ? 3 : 0;
}
