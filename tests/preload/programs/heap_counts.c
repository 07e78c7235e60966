/* A program whose allocator calls are known in advance: N mallocs of
 * 16 + i % 100 bytes, a calloc(10, 8) grown by realloc to 200, every block
 * freed. No stdio (its buffers would allocate): output goes through write(). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  void** blocks = (void**)malloc(sizeof(void*) * (size_t)n);
  for (int i = 0; i < n; ++i) blocks[i] = malloc(16 + (size_t)(i % 100));
  for (int i = 0; i < n; ++i) free(blocks[i]);
  free(blocks);
  void* q = calloc(10, 8);
  q = realloc(q, 200);
  free(q);
  const char* msg = argc > 2 ? argv[2] : "ok";
  if (write(1, msg, strlen(msg)) < 0 || write(1, "\n", 1) < 0) return 1;
  return 7;
}
