/* A process that forks, spawns and execs, with allocations known in
 * advance, for the heap section of spoor report across fork and exec:
 *   hold_for_child  10 blocks of 2000 bytes, live when the parent forks
 *   (fork child)    free_inherited frees 6 of its copies of them,
 *                   child_leak allocates 2 blocks of 700 and keeps them,
 *                   then _exit (no exit-time frees)
 *   (spawned)       posix_spawn of this program with "spawned": 5 blocks
 *                   of 900 allocated and freed
 *   live_at_exec    4 blocks of 3000, live when the parent execs itself
 *   (exec'd image)  own_leak: 1 block of 500, never freed
 * No stdio (its buffers would allocate). */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static void* held[10];
static void* volatile kept[4];
void* volatile child_kept[2];
void* volatile leaked;

__attribute__((noinline)) void hold_for_child(void) {
  for (int i = 0; i < 10; ++i) held[i] = malloc(2000);
}

__attribute__((noinline)) void free_inherited(void) {
  for (int i = 0; i < 6; ++i) free(held[i]);
}

__attribute__((noinline)) void child_leak(void) {
  for (int i = 0; i < 2; ++i) child_kept[i] = malloc(700);
}

__attribute__((noinline)) void spawned_churn(void) {
  for (int i = 0; i < 5; ++i) free(malloc(900));
}

__attribute__((noinline)) void live_at_exec(void) {
  for (int i = 0; i < 4; ++i) kept[i] = malloc(3000);
}

__attribute__((noinline)) void own_leak(void) { leaked = malloc(500); }

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "spawned") == 0) {
    spawned_churn();
    _exit(0);
  }
  if (argc > 1 && strcmp(argv[1], "execd") == 0) {
    own_leak();
    _exit(0);
  }
  hold_for_child();
  const pid_t child = fork();
  if (child == 0) {
    free_inherited();
    child_leak();
    _exit(0);
  }
  int status;
  if (child < 0 || waitpid(child, &status, 0) != child) return 1;
  pid_t spawned;
  char* spawn_argv[] = {argv[0], "spawned", NULL};
  if (posix_spawn(&spawned, "/proc/self/exe", NULL, NULL, spawn_argv, environ) != 0) return 1;
  if (waitpid(spawned, &status, 0) != spawned) return 1;
  live_at_exec();
  char* exec_argv[] = {argv[0], "execd", NULL};
  execv("/proc/self/exe", exec_argv);
  return 1;
}
