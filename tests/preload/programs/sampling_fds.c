/* The descriptors a traced program finds it has, as its threads start, fork
 * and end. Main starts N threads (argv[1], default 4) that wait at a
 * barrier, and prints the process's perf-event descriptors (the task
 * clocks the shim samples with, if any); then forks, and the child prints
 * its own and exits; then the threads end and main prints its own again.
 * Each line is "WHEN COUNT LOWEST": how many descriptors are perf events,
 * and the lowest such number (-1: none). Untraced: "threads 0 -1" and so
 * on. Every number up to the descriptor limit is looked at: a listing of
 * /proc/self/fd leaves the shim's descriptors out. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_barrier_t started, done;

static void* worker(void* arg) {
  (void)arg;
  pthread_barrier_wait(&started);
  pthread_barrier_wait(&done);
  return NULL;
}

static void print_perf_descriptors(const char* when) {
  struct rlimit limit;
  const int top = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 4096 ? (int)limit.rlim_cur : 4096;
  int count = 0, lowest = -1;
  for (int fd = 0; fd < top; ++fd) {
    char path[64], target[PATH_MAX];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (strcmp(target, "anon_inode:[perf_event]") != 0) continue;
    ++count;
    if (lowest < 0) lowest = fd;
  }
  printf("%s %d %d\n", when, count, lowest);
  fflush(stdout);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 4;
  pthread_barrier_init(&started, NULL, n + 1);
  pthread_barrier_init(&done, NULL, n + 1);
  pthread_t* t = calloc(n, sizeof *t);
  for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, worker, NULL);
  pthread_barrier_wait(&started);
  print_perf_descriptors("threads");
  const pid_t child = fork();
  if (child == 0) {
    print_perf_descriptors("child");
    _exit(0);
  }
  waitpid(child, NULL, 0);
  pthread_barrier_wait(&done);
  for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
  print_perf_descriptors("joined");
  free(t);
  return 0;
}
