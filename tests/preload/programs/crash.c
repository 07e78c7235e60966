/* Allocates and frees N blocks, then ends by a signal: segv, kill or abort. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const int n = atoi(argv[1]);
  for (int i = 0; i < n; ++i) {
    void* volatile p = malloc(24);
    free(p);
  }
  if (strcmp(argv[2], "segv") == 0) {
    volatile int* nowhere = 0;
    *nowhere = 1;
  }
  if (strcmp(argv[2], "kill") == 0) kill(getpid(), SIGKILL);
  if (strcmp(argv[2], "abort") == 0) abort();
  return 0;
}
