// spoor_bench_stack_table: what the preload shim's stack table
// (preload/shim/stack_table.h) costs per lookup of a stack it already
// holds: stack_id_of on 24-frame stacks, the path every capture takes
// that its thread's recent walks do not answer (and every CPU sample).
// The table holds 16, 4096 or 262144 distinct stacks (filled before
// timing, so the growing table has grown as far as that many need), and
// the lookups go through them in a shuffled order: 16 stay in the L1
// cache, 262144 miss in every cache. No Stack event is written (no
// recording: the provider is off).
//
//   spoor_bench_stack_table [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "stack_table.h"

namespace {

constexpr int kDepth = 24;

struct Stacks {
  std::vector<void*> frames;  // kDepth per stack
  std::vector<uint32_t> order;
};

Stacks make_stacks(int n) {
  Stacks s;
  std::mt19937_64 rng(n);
  s.frames.resize(static_cast<size_t>(n) * kDepth);
  // Return addresses of a few modules' text, shared outer frames like a
  // program's: the innermost 8 differ, the rest come from 64 outer paths.
  std::vector<void*> outer(64 * (kDepth - 8));
  for (void*& f : outer) f = reinterpret_cast<void*>(0x7f0000000000ull + (rng() & 0xFFFFFFull));
  for (int i = 0; i < n; ++i) {
    void** frames = &s.frames[static_cast<size_t>(i) * kDepth];
    for (int k = 0; k < 8; ++k) frames[k] = reinterpret_cast<void*>(0x550000000000ull + (rng() & 0xFFFFFull));
    const size_t path = rng() % 64;
    for (int k = 8; k < kDepth; ++k) frames[k] = outer[path * (kDepth - 8) + (k - 8)];
  }
  s.order.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) s.order[static_cast<size_t>(i)] = static_cast<uint32_t>(i);
  std::shuffle(s.order.begin(), s.order.end(), rng);
  return s;
}

void BM_KnownStack(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Stacks s = make_stacks(n);
  // Twice: the second pass finds what the first one put in older levels
  // and copies it into the newest, as a long-running process does.
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < n; ++i) benchmark::DoNotOptimize(spoor::preload::stack_id_of(&s.frames[i * kDepth], kDepth));
  size_t at = 0;
  for (auto _ : state) {
    const uint32_t i = s.order[at];
    at = at + 1 == s.order.size() ? 0 : at + 1;
    benchmark::DoNotOptimize(spoor::preload::stack_id_of(&s.frames[i * kDepth], kDepth));
  }
}
BENCHMARK(BM_KnownStack)->Arg(16)->Arg(4096)->Arg(262144);

}  // namespace

int main(int argc, char** argv) {
  if (!spoor::preload::init_stack_table(64)) return 1;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
