/* A child process made with clone() itself, not fork(): glibc runs no fork
 * handlers in it. The parent makes 100 blocks of 1300 bytes, the child 300
 * of 1301, each freed at once; each must be the allocating process's own
 * in the trace.
 *
 *   spoor_test_raw_clone            clone() with a stack of the program's
 *   spoor_test_raw_clone syscall    syscall(SYS_clone, SIGCHLD, 0, ...):
 *                                   the child returns 0 on a copy of the
 *                                   caller's stack, as from fork()
 *   spoor_test_raw_clone clone3     syscall(SYS_clone3, ...) the same way */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

int main(int argc, char** argv) {
  churn(100, 1300);
  pid_t pid;
  if (argc > 1 && strcmp(argv[1], "syscall") == 0) {
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) _exit(child(NULL));
  } else if (argc > 1 && strcmp(argv[1], "clone3") == 0) {
    /* struct clone_args as the kernel reads it (linux/sched.h's first
     * form), without the header whose CLONE_ names <sched.h> has too. */
    struct {
      unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    } args;
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) _exit(child(NULL));
  } else {
    pid = clone(child, child_stack + sizeof child_stack, SIGCHLD, NULL);
  }
  if (pid < 0) return 1;
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
