/* One thread installs a handler over and over while the main thread forks
 * 100 children, each of which installs a handler of its own and exits. A
 * child whose sigaction waits on a lock copied while the other thread held
 * it would wait forever (with every signal blocked): the parent gives each
 * child 5 s, then kills it, counts it as stuck and stops. Prints
 * "children N, stuck S"; exits 0 when none was stuck, 1 otherwise. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "set_handler.h"

static atomic_int stop;

static void on_usr2(int sig) { (void)sig; }

static void* install_again_and_again(void* arg) {
  (void)arg;
  while (!atomic_load(&stop)) set_handler(SIGUSR2, on_usr2);
  return NULL;
}

int main(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, install_again_and_again, NULL) != 0) return 2;
  enum { kChildren = 100 };
  int stuck = 0, children = 0;
  for (; children < kChildren && stuck == 0; ++children) {
    const pid_t child = fork();
    if (child == 0) {
      set_handler(SIGUSR2, on_usr2);
      _exit(0);
    }
    if (child < 0) return 2;
    int status = 0;
    pid_t done = 0;
    for (int waited_ms = 0; (done = waitpid(child, &status, WNOHANG)) == 0 && waited_ms < 5000; ++waited_ms) {
      const struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    if (done == 0) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      ++stuck;
    }
  }
  atomic_store(&stop, 1);
  pthread_join(thread, NULL);
  printf("children %d, stuck %d\n", children, stuck);
  return stuck == 0 ? 0 : 1;
}
