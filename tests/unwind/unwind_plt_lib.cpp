// A shared library for the fast unwinder's tests: frames in another module,
// entered through the PLT.
extern "C" __attribute__((visibility("default"), noinline)) void spoor_test_plt_recurse(int depth, void (*leaf)()) {
  volatile char pad[16];
  pad[0] = static_cast<char>(depth);
  if (depth <= 0) leaf();
  else spoor_test_plt_recurse(depth - 1, leaf);  // through the PLT too: the symbol is interposable
  __asm__ volatile("" ::: "memory");
  (void)pad[0];
}
