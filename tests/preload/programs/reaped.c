// Children reaped where the shim's wait hooks cannot see the status, or
// could miss it: by a SIGCHLD handler that lands while the main thread is
// inside the shim's allocation hooks, and by glibc's system() and
// pclose(), which wait inside libc. Every child's end must still be in the
// trace: 40 forked children (even: exit with 1 + i % 7; odd: killed by
// SIGTERM, which only a reaper can report), `sh -c 'exit 3'` through
// system() and `sh -c 'exit 4'` through popen(), and a shell each of them
// starts that kills itself (SIGTERM, SIGHUP): only system()'s and pclose()'s
// results say so.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kChildren = 40 };
static volatile sig_atomic_t reaped;

static void on_child(int sig) {
  (void)sig;
  int status;
  while (waitpid(-1, &status, WNOHANG) > 0) reaped++;
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_child;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);
  for (int i = 0; i < kChildren; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (i % 2 == 1) kill(getpid(), SIGTERM);
      _exit(1 + i % 7);
    }
    // Allocate while the child ends: its SIGCHLD lands inside the hooks.
    void* keep[64];
    for (int round = 0; round < 200; ++round) {
      for (int k = 0; k < 64; ++k) keep[k] = malloc(16 + k);
      for (int k = 0; k < 64; ++k) free(keep[k]);
    }
  }
  // SIGCHLD blocked between the test and the wait: a last child that ends
  // after the test but before pause() would leave pause() waiting forever.
  sigset_t chld, before;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &before);
  while (reaped < kChildren) sigsuspend(&before);
  sigprocmask(SIG_SETMASK, &before, NULL);
  // system() and pclose() reap in libc; the handler must not take theirs.
  signal(SIGCHLD, SIG_DFL);
  const int by_system = system("exit 3");
  FILE* pipe = popen("exit 4", "r");
  const int by_pclose = pipe != NULL ? pclose(pipe) : -1;
  const int killed_in_system = system("kill -TERM $$");
  FILE* killed_pipe = popen("kill -HUP $$", "r");
  const int killed_in_pclose = killed_pipe != NULL ? pclose(killed_pipe) : -1;
  printf("reaped %d, system %d, pclose %d, killed by %d and %d\n", (int)reaped, WEXITSTATUS(by_system),
         WEXITSTATUS(by_pclose), WIFSIGNALED(killed_in_system) ? WTERMSIG(killed_in_system) : 0,
         WIFSIGNALED(killed_in_pclose) ? WTERMSIG(killed_in_pclose) : 0);
  return 0;
}
