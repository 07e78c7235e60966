/* A child process made with clone() itself, not fork(): glibc runs no fork
 * handlers in it. The parent makes 100 blocks of 1300 bytes, the child 300
 * of 1301, each freed at once; each must be the allocating process's own
 * in the trace. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static char child_stack[1 << 20] __attribute__((aligned(16)));

static void churn(int count, size_t size) {
  for (int i = 0; i < count; ++i) {
    void* volatile block = malloc(size);
    free(block);
  }
}

static int child(void* arg) {
  (void)arg;
  churn(300, 1301);
  return 5;
}

int main(void) {
  churn(100, 1300);
  const pid_t pid = clone(child, child_stack + sizeof child_stack, SIGCHLD, NULL);
  if (pid < 0) return 1;
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
