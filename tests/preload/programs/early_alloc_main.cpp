// Links early_alloc.c's library, whose constructor allocates before the
// shim's; its own static initializer allocates 23456 bytes (after the
// shim's constructor: the program is initialised last). Frees the library's
// 12345-byte block and the initializer's block.
#include <cstdlib>
#include <vector>

extern "C" void early_alloc_release(void);

namespace {
std::vector<char>* g_block = new std::vector<char>(23456);
}  // namespace

int main() {
  early_alloc_release();
  delete g_block;
  return 0;
}
