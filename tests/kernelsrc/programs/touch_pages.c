// Touches N fresh pages of one anonymous mapping, one write each, and
// prints the mapping's address: the trace must show a page fault at each.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const long pages = argc > 1 ? atol(argv[1]) : 1000;
  const long page = sysconf(_SC_PAGESIZE);
  volatile char* p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  for (long i = 0; i < pages; ++i) p[i * page] = 1;
  printf("%lx %ld %ld\n", (unsigned long)(uintptr_t)p, pages, page);
  return 0;
}
