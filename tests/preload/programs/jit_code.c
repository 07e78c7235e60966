// Code in no module, as a JIT makes it, and perf's map of it, as a JIT
// writes one (/tmp/perf-PID.map): a trampoline in anonymous executable
// memory, keeping its frame with rbp, calls a function that allocates
// 4242 bytes, three times. The map stays for the report to read; the test
// removes it. Prints the pid.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) static void* allocate_block(void) {
  void* p = malloc(4242);
  __asm__ volatile("" : : "r"(p) : "memory");  // a call, not a tail jump
  return p;
}

int main(void) {
  // push rbp; mov rbp, rsp; call rdi; pop rbp; ret
  static const unsigned char kTrampoline[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};
  unsigned char* code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) return 1;
  memcpy(code, kTrampoline, sizeof kTrampoline);
  if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) return 1;
  char path[64];
  snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
  FILE* map = fopen(path, "w");
  if (map == NULL) return 1;
  fprintf(map, "%lx %zx spoor_test_jit_trampoline\n", (unsigned long)(uintptr_t)code, sizeof kTrampoline);
  fclose(map);
  void* (*trampoline)(void* (*)(void)) = (void* (*)(void* (*)(void)))(uintptr_t)code;
  void* blocks[3];
  for (int i = 0; i < 3; ++i) blocks[i] = trampoline(allocate_block);
  for (int i = 0; i < 3; ++i) free(blocks[i]);
  printf("%d\n", (int)getpid());
  return 0;
}
