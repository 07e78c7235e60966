// Sleeps for argv[1] seconds. Linked statically, so LD_PRELOAD cannot reach
// it: a process a traced program leaves running that the recorder can only
// wait for (record_signals_test.cpp).
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  unsigned left = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  while (left > 0) left = sleep(left);
  return 0;
}
