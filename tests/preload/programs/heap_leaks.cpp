// Leaks exactly the blocks heap_leaks.h lists, every one definitely lost,
// and frees the other blocks it allocates in the same band. Built at -O0
// with -fno-builtin so that no call is merged or dropped. No stdio: its
// buffers would allocate.
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap_leaks.h"

namespace {

using heap_leaks::Batch;
using heap_leaks::Function;

// malloc(from), then realloc to `to` while the block right after it is in
// use, so that the block moves: the trace must then pair the realloc's old
// address with the earlier allocation.
void* grow_elsewhere(size_t from, size_t to) {
  void* p = malloc(from);
  void* neighbour = malloc(from);
  void* q = realloc(p, to);
  free(neighbour);
  return q;
}

// The block is zeroed so that it holds no pointer to another leaked block
// (which would make that one "indirectly" lost), and then dropped.
__attribute__((noinline)) bool leak_one(const Batch& b, int i) {
  const size_t size = heap_leaks::size_of(b, i);
  void* p = nullptr;
  switch (b.function) {
    case Function::malloc:
      p = malloc(size);
      break;
    case Function::calloc:
      p = calloc(3, size / 3);
      break;
    case Function::realloc_moved:
      p = grow_elsewhere(size - 3000, size);
      break;
    case Function::operator_new_array:
      p = new char[size];
      break;
    case Function::memalign:
      p = memalign(64, size);
      break;
  }
  if (p == nullptr) return false;
  memset(p, 0, size);
  return true;
}

// Blocks in the band that are given back: frees the leak count must pair.
__attribute__((noinline)) bool allocate_and_free(int i) {
  void* a = malloc(55000 + static_cast<size_t>(i));
  char* b = new char[56000 + static_cast<size_t>(i)];
  void* c = grow_elsewhere(57000 + static_cast<size_t>(i), 58000 + static_cast<size_t>(i));
  const bool ok = a != nullptr && c != nullptr;
  free(a);
  delete[] b;
  free(c);
  return ok;
}

// Overwrites the dead stack below main's frame, where the leaked pointers
// were, so that nothing on the stack still points at a leaked block.
__attribute__((noinline)) void scrub_stack() {
  volatile char junk[64 * 1024];
  memset(const_cast<char*>(junk), 0, sizeof junk);
}

}  // namespace

int main() {
  for (int i = 0; i < 10; ++i)
    if (!allocate_and_free(i)) return 1;
  for (const Batch& b : heap_leaks::kLeaks)
    for (int i = 0; i < b.count; ++i)
      if (!leak_one(b, i)) return 1;
  scrub_stack();
  return write(1, "done\n", 5) == 5 ? 0 : 1;
}
