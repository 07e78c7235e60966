// Every kind of operator new and delete, a failed allocation that throws,
// and the program's own mappings, each with sizes that are easy to count.
#include <sys/mman.h>

#include <cstdio>
#include <new>

struct alignas(64) Aligned {
  char bytes[64];
};

int main() {
  // Where main is: an operator new hook's stack starts in main itself, not
  // inside libstdc++'s operator new.
  std::printf("main=%p\n", reinterpret_cast<void*>(&main));
  for (int i = 0; i < 10; ++i) delete new int(i);         // 4 bytes, sized delete
  for (int i = 0; i < 10; ++i) delete[] new char[100];    // 100 bytes
  for (int i = 0; i < 5; ++i) delete[] new (std::nothrow) char[7];
  for (int i = 0; i < 5; ++i) delete new Aligned;         // 64 bytes, aligned new/delete
  try {
    char* volatile huge = new char[~size_t{0} >> 2];      // throws std::bad_alloc
    delete[] huge;
  } catch (const std::bad_alloc&) {
    std::puts("bad_alloc caught");
  }
  for (int i = 0; i < 3; ++i) delete[] new char[33];      // still counted after the throw
  void* m = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  m = mremap(m, 1 << 20, 2 << 20, MREMAP_MAYMOVE);
  munmap(m, 2 << 20);
  return 0;
}
