// A process tree with known allocations: the parent, a fork child, a
// posix_spawn child, and a vfork child that execs with an environment of
// its own (no LD_PRELOAD). Each allocates `count` blocks of a size that
// says who it is (1000 + role) and exits with a code of its own.
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static void allocate(int role, int count) {
  for (int i = 0; i < count; ++i) free(malloc(1000 + role));
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "spawned") == 0) {
    allocate(2, 300);
    return 4;
  }
  if (argc > 1 && strcmp(argv[1], "execd") == 0) {
    allocate(3, 400);
    return 5;
  }
  allocate(0, 100);
  const pid_t forked = fork();
  if (forked == 0) {
    allocate(1, 200);
    exit(3);
  }
  pid_t spawned;
  char* spawn_argv[] = {argv[0], "spawned", NULL};
  if (posix_spawn(&spawned, "/proc/self/exe", NULL, NULL, spawn_argv, environ) != 0) return 1;
  char* exec_argv[] = {argv[0], "execd", NULL};
  char* exec_env[] = {"SPOOR_TEST_OWN_ENV=1", NULL};
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  const pid_t vforked = vfork();
  if (vforked == 0) {
    execve(self, exec_argv, exec_env);
    _exit(127);
  }
  int codes = 0, status;
  if (waitpid(forked, &status, 0) == forked && WIFEXITED(status)) codes += WEXITSTATUS(status);
  if (waitpid(spawned, &status, 0) == spawned && WIFEXITED(status)) codes += WEXITSTATUS(status);
  if (waitpid(vforked, &status, 0) == vforked && WIFEXITED(status)) codes += WEXITSTATUS(status);
  printf("children exited with %d in all\n", codes);
  return 0;
}
