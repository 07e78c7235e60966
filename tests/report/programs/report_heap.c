/* Allocations known in advance, in functions of their own, for the heap
 * section of spoor report:
 *   hold_blocks     100 blocks of 10000 bytes, all live at once (the peak),
 *                   then release_blocks frees them
 *   churn           50 blocks of 1000 bytes, each freed at once (temporary)
 *   leak_some       3 blocks of 300 bytes, never freed
 * No stdio (its buffers would allocate): the one line goes out with write. */
#include <stdlib.h>
#include <unistd.h>

static void* blocks[100];
void* volatile leaked[3];

__attribute__((noinline)) void hold_blocks(void) {
  for (int i = 0; i < 100; ++i) blocks[i] = malloc(10000);
}

__attribute__((noinline)) void release_blocks(void) {
  for (int i = 0; i < 100; ++i) free(blocks[i]);
}

__attribute__((noinline)) void churn(void) {
  for (int i = 0; i < 50; ++i) free(malloc(1000));
}

__attribute__((noinline)) void leak_some(void) {
  for (int i = 0; i < 3; ++i) leaked[i] = malloc(300);
}

int main(void) {
  hold_blocks();
  release_blocks();
  churn();
  leak_some();
  return write(1, "done\n", 5) == 5 ? 0 : 1;
}
