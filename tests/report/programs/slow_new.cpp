// A replacement global operator new and delete in a shared library, as a
// program's own allocator library would be, that spend their time in
// burn_in_allocator before calling malloc and free. Loaded after
// libspoor-preload.so, they are what the shim's hooks call as the real
// operators.
#include <cstdlib>
#include <new>

extern "C" __attribute__((noinline)) void burn_in_allocator() {
  for (int i = 0; i < 20000; ++i) __asm__ volatile("");
}

void* operator new(std::size_t size) {
  burn_in_allocator();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

void operator delete(void* p) noexcept {
  burn_in_allocator();
  std::free(p);
}

void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
