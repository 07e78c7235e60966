/* One allocating function reached through two call paths, for the heap
 * report's ranking of allocating functions (sites merged by the function
 * that calls the allocator):
 *   alloc_here        the one function that calls malloc for both paths
 *   from_small_path   3 calls of alloc_here(100), kept live
 *   from_large_path   5 calls of alloc_here(1000), kept live
 *   scratch           2 blocks of 64 bytes, each freed at once (temporary)
 *   make_record       4 blocks of 48 bytes through checked_malloc, an
 *                     allocator wrapper (its name says so), freed at the end
 * Then every block is freed but the first of each path (1100 bytes leaked
 * in 2 blocks). No stdio (its buffers would allocate). */
#include <stdlib.h>
#include <unistd.h>

static void* small_blocks[3];
static void* large_blocks[5];

__attribute__((noinline)) void* alloc_here(size_t size) { return malloc(size); }

__attribute__((noinline)) void from_small_path(void) {
  for (int i = 0; i < 3; ++i) small_blocks[i] = alloc_here(100);
}

__attribute__((noinline)) void from_large_path(void) {
  for (int i = 0; i < 5; ++i) large_blocks[i] = alloc_here(1000);
}

__attribute__((noinline)) void* checked_malloc(size_t size) {
  void* p = malloc(size);
  if (p == NULL) abort();
  return p;
}

static void* records[4];

__attribute__((noinline)) void make_record(void) {
  for (int i = 0; i < 4; ++i) records[i] = checked_malloc(48);
}

__attribute__((noinline)) void scratch(void) {
  for (int i = 0; i < 2; ++i) free(malloc(64));
}

int main(void) {
  scratch();
  from_small_path();
  from_large_path();
  make_record();
  for (int i = 0; i < 4; ++i) free(records[i]);
  for (int i = 1; i < 3; ++i) free(small_blocks[i]);
  for (int i = 1; i < 5; ++i) free(large_blocks[i]);
  return write(1, "done\n", 5) == 5 ? 0 : 1;
}
