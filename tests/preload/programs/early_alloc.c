/* A library whose constructor allocates before libspoor-preload.so's
 * constructor runs (libraries are initialised before the preload):
 * blocks of 12345, 12346 and 12347 bytes; the 12346-byte one is freed at
 * once, the 12345-byte one by early_alloc_release(). */
#include <stdlib.h>

static void* kept;

__attribute__((constructor)) static void allocate_early(void) {
  kept = malloc(12345);
  free(malloc(12346));
  static void* leaked;
  leaked = malloc(12347);
  /* SPOOR_TEST_EARLY_BLOCKS=n: n more 16-byte blocks, kept, for a log
   * that cannot hold them all. */
  const char* more = getenv("SPOOR_TEST_EARLY_BLOCKS");
  static void* blocks[65536];
  for (int i = 0, n = more != NULL ? atoi(more) : 0; i < n && i < 65536; ++i) blocks[i] = malloc(16);
}

void early_alloc_release(void) { free(kept); }
