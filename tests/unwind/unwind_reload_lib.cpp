// Built twice with different SPOOR_TEST_FRAME_WORDS: the same code layout
// (so the return address into spoor_test_reload_call is at the same offset)
// with a different frame size, hence a different CFA rule there. Loaded one
// after the other at the same address, a stale cached rule would unwind
// the second with the first's CFA.
#ifndef SPOOR_TEST_FRAME_WORDS
#error "define SPOOR_TEST_FRAME_WORDS"
#endif

extern "C" __attribute__((visibility("default"), noinline)) void spoor_test_reload_call(void (*leaf)()) {
  volatile unsigned long pad[SPOOR_TEST_FRAME_WORDS];
  pad[0] = 1;
  leaf();
  __asm__ volatile("" ::: "memory");
  (void)pad[0];
}
