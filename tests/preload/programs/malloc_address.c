// A non-PIE program that takes malloc's address in its code, as node does.
// The linker then gives the executable an undefined "malloc" symbol whose
// value is its PLT entry, and that entry is what every module (dlsym
// included) sees as malloc's address, although the calls still go to the
// definition the entry's GOT slot was bound to: the shim's.
//
// Allocates 50 blocks of 5000 + i bytes through the pointer, frees them,
// prints "50 blocks".
#include <stdio.h>
#include <stdlib.h>

void* (*volatile g_allocate)(size_t);

int main(void) {
  g_allocate = malloc;  // an absolute address in code: the canonical PLT entry
  void* blocks[50];
  for (int i = 0; i < 50; ++i) blocks[i] = g_allocate(5000 + (size_t)i);
  for (int i = 0; i < 50; ++i) free(blocks[i]);
  printf("50 blocks\n");
  return 0;
}
