// Makes exactly the allocator calls heap_known.h lists and frees every
// block. Built at -O0 with -fno-builtin so that no call is merged or
// dropped. No stdio: its buffers would allocate.
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <new>

#include "heap_known.h"

namespace {

using heap_known::Batch;
using heap_known::Function;

void* blocks[100];  // the realloc_from_null blocks, until realloc_grow grows them

// Allocates and frees one block; returns false if the allocator failed.
bool allocate_and_free(const Batch& b, int i) {
  const size_t size = heap_known::size_of(b, i);
  switch (b.function) {
    case Function::malloc: {
      void* p = malloc(size);
      free(p);
      return p != nullptr;
    }
    case Function::calloc: {
      void* p = calloc(4, size / 4);
      free(p);
      return p != nullptr;
    }
    case Function::realloc_from_null:
      blocks[i] = realloc(nullptr, size);  // freed by realloc_grow's batch
      return blocks[i] != nullptr;
    case Function::realloc_grow: {
      void* p = realloc(blocks[i], size);
      free(p);
      return p != nullptr;
    }
    case Function::operator_new:
      ::operator delete(::operator new(size));
      return true;
    case Function::operator_new_array:
      delete[] new char[size];
      return true;
    case Function::operator_new_nothrow: {
      char* p = new (std::nothrow) char[size];
      delete[] p;
      return p != nullptr;
    }
    case Function::operator_new_aligned:
      ::operator delete[](new (std::align_val_t(64)) char[size], std::align_val_t(64));
      return true;
    case Function::posix_memalign: {
      void* p = nullptr;
      const int err = posix_memalign(&p, 64, size);
      free(p);
      return err == 0;
    }
    case Function::aligned_alloc: {
      void* p = aligned_alloc(64, size);
      free(p);
      return p != nullptr;
    }
    case Function::valloc: {
      void* p = valloc(size);
      free(p);
      return p != nullptr;
    }
    case Function::memalign: {
      void* p = memalign(64, size);
      free(p);
      return p != nullptr;
    }
    case Function::pvalloc: {
      void* p = pvalloc(size);
      free(p);
      return p != nullptr;
    }
  }
  return false;
}

}  // namespace

int main() {
  for (const Batch& b : heap_known::kBatches)
    for (int i = 0; i < b.count; ++i)
      if (!allocate_and_free(b, i)) return 1;
  return write(1, "done\n", 5) == 5 ? 0 : 1;
}
