/* One call to each aligned or array allocator, each block freed. */
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  void* a = NULL;
  if (posix_memalign(&a, 64, 100) != 0) return 1;
  void* b = aligned_alloc(128, 256);
  void* c = memalign(32, 50);
  void* d = valloc(10);
  void* e = pvalloc(10);
  void* f = reallocarray(NULL, 4, 8);
  free(a);
  free(b);
  free(c);
  free(d);
  free(e);
  free(f);
  return 0;
}
