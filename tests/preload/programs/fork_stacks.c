// A fork child that allocates through the very call path its parent used
// before the fork: same frames, a stack the child inherits from its parent. The
// sizes tell who allocated: 2000 the parent before the fork, 2001 the
// parent after it, 2002 the child.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void churn(int size) { free(malloc((size_t)size)); }
__attribute__((noinline)) static void step(int size) { churn(size); }

int main(void) {
  pid_t child = -1;
  for (int round = 0; round < 2; ++round) {
    step(round == 0 ? 2000 : (child == 0 ? 2002 : 2001));  // one call site for all three
    if (round == 0) child = fork();
  }
  if (child == 0) _exit(0);
  int status = 0;
  return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
