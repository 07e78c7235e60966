/* Allocates through a known call chain (main -> middle -> leaf -> malloc)
 * ten times from the same place, and prints where those functions are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) void* leaf(size_t n) {
  void* p = malloc(n);
  __asm__ volatile("" ::: "memory"); /* no tail call: leaf stays on the stack */
  return p;
}

__attribute__((noinline)) void* middle(size_t n) {
  void* p = leaf(n);
  __asm__ volatile("" ::: "memory");
  return p;
}

int main(void) {
  void* keep[10];
  for (int i = 0; i < 10; ++i) keep[i] = middle(1000 + (size_t)i);
  char line[160];
  /* snprintf into a stack buffer does not allocate. */
  int n = snprintf(line, sizeof line, "leaf=%p middle=%p main=%p\n", (void*)leaf, (void*)middle, (void*)main);
  if (write(1, line, (size_t)n) < 0) return 1;
  for (int i = 0; i < 10; ++i) free(keep[i]);
  return 0;
}
