/* A malloc-heavy program for trace-size and overhead measurements: N
 * iterations (default 1,000,000), each allocating a block of 16 to 527 bytes
 * from one of four call sites into a window of 1024 live blocks and freeing
 * the block it replaces; every 16th iteration grows a block with realloc
 * instead. About 1.06 allocator calls that allocate per iteration, each
 * followed by a free, as in heaptrack's and bytehound's benchmarks.
 *
 *   alloc_churn [ITERATIONS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kWindow = 1024 };
static void* g_live[kWindow];

/* Distinct functions, so the allocations have four distinct stacks. */
__attribute__((noinline)) static void* site_a(size_t n) { return malloc(n); }
__attribute__((noinline)) static void* site_b(size_t n) { return malloc(n); }
__attribute__((noinline)) static void* site_c(size_t n) { return calloc(1, n); }
__attribute__((noinline)) static void* site_d(size_t n) { return malloc(n); }

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 1000000;
  uint32_t rng = 12345;
  uint64_t touched = 0;
  for (long i = 0; i < iterations; ++i) {
    rng = rng * 1664525u + 1013904223u;
    const size_t size = 16 + (rng >> 23);  /* 16 .. 527 */
    const unsigned slot = (unsigned)i % kWindow;
    if (i % 16 == 15 && g_live[slot] != NULL) {
      void* grown = realloc(g_live[slot], size + 64);
      if (grown == NULL) return 1;
      g_live[slot] = grown;
      continue;
    }
    void* p = NULL;
    switch ((rng >> 8) & 3) {
      case 0: p = site_a(size); break;
      case 1: p = site_b(size); break;
      case 2: p = site_c(size); break;
      default: p = site_d(size); break;
    }
    if (p == NULL) return 1;
    memset(p, (int)i, 8);
    touched += ((unsigned char*)p)[0];
    free(g_live[slot]);
    g_live[slot] = p;
  }
  for (unsigned i = 0; i < kWindow; ++i) free(g_live[i]);
  printf("alloc_churn: %ld iterations (%llu)\n", iterations, (unsigned long long)touched);
  return 0;
}
