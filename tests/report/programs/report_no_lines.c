// Built without debug information: its functions are named by their ELF
// symbols only. make_pair_of_blocks allocates at two places, 10 times
// each, and frees both; the report must tell the two sites apart.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void make_pair_of_blocks(void** first, void** second) {
  *first = malloc(4001);
  *second = malloc(4002);
}

int main(void) {
  for (int i = 0; i < 10; ++i) {
    void* a;
    void* b;
    make_pair_of_blocks(&a, &b);
    free(a);
    free(b);
  }
  puts("done");
  return 0;
}
