// A program whose own malloc (in the executable, so it comes before the
// shim in the lookup order, as rustc's jemalloc does) maps its memory with
// mmap while it holds its lock. The shim's mmap hook then runs inside that
// allocator: if its stack capture allocated (building an unwind rule with
// libdw), the allocation would come back into this malloc under the lock.
// A real allocator waits on its lock forever there; this one says so and
// exits with 99.
//
// Prints the addresses of the functions that map, for the test to find in
// the Mmap events' stacks.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { kChunk = 1 << 20, kBig = 3 << 20, kBigMaps = 8 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int holding;
static unsigned char* chunk;
static size_t chunk_used = kChunk;

static void reentered(void) {
  static const char message[] = "own_allocator_maps: malloc re-entered while it held its lock\n";
  (void)!write(2, message, sizeof message - 1);
  _exit(99);
}

// Every block has its size in the 16 bytes before it (for realloc).
static void* take(size_t n, size_t align) {
  if (holding) reentered();
  pthread_mutex_lock(&lock);
  holding = 1;
  unsigned char* block = NULL;
  const size_t need = ((n + 15) & ~(size_t)15) + 16 + align;
  if (need > kChunk / 2) {  // its own mapping, under the lock
    unsigned char* m = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) block = m;
  } else {
    if (chunk_used + need > kChunk) {
      unsigned char* m = mmap(NULL, kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m != MAP_FAILED) {
        chunk = m;
        chunk_used = 0;
      }
    }
    if (chunk_used + need <= kChunk) {
      block = chunk + chunk_used;
      chunk_used += need;
    }
  }
  void* p = NULL;
  if (block != NULL) {
    uintptr_t at = (uintptr_t)block + 16;
    if (align > 16) at = (at + align - 1) & ~(uintptr_t)(align - 1);
    memcpy((void*)(at - 16), &n, sizeof n);
    p = (void*)at;
  }
  holding = 0;
  pthread_mutex_unlock(&lock);
  return p;
}

void* malloc(size_t n) { return take(n, 16); }
void free(void* p) { (void)p; }
void* calloc(size_t a, size_t b) { return a != 0 && b > SIZE_MAX / a ? NULL : take(a * b, 16); }  // mmap's memory is zero
void* realloc(void* old, size_t n) {
  void* p = take(n, 16);
  if (p != NULL && old != NULL) {
    size_t had;
    memcpy(&had, (unsigned char*)old - 16, sizeof had);
    memcpy(p, old, had < n ? had : n);
  }
  return p;
}
void* aligned_alloc(size_t align, size_t n) { return take(n, align < 16 ? 16 : align); }
void* memalign(size_t align, size_t n) { return take(n, align < 16 ? 16 : align); }
int posix_memalign(void** out, size_t align, size_t n) {
  *out = take(n, align < 16 ? 16 : align);
  return *out != NULL ? 0 : 12;
}
size_t malloc_usable_size(void* p) {
  size_t n = 0;
  if (p != NULL) memcpy(&n, (unsigned char*)p - 16, sizeof n);
  return n;
}

// Fresh return addresses: no capture has walked through them before the
// first big block, so its capture finds no cached unwind rule for them.
__attribute__((noinline)) void* map_big(int i) { return malloc(kBig + (size_t)i * 4096); }
__attribute__((noinline)) void* map_through(int i) {
  void* p = map_big(i);
  __asm__ volatile("" ::: "memory");
  return p;
}

int main(void) {
  size_t sum = 0;
  for (int i = 0; i < kBigMaps; ++i) {
    unsigned char* p = map_through(i);
    if (p == NULL) return 1;
    p[0] = (unsigned char)i;
    sum += p[0];
  }
  char* s = strdup("small blocks too");
  printf("mapped %d, sum %zu, %s\n", kBigMaps, sum, s);
  printf("map_big=%llx map_through=%llx\n", (unsigned long long)(uintptr_t)map_big,
         (unsigned long long)(uintptr_t)map_through);
  return 0;
}
