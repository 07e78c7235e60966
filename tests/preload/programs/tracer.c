/* A minimal debugger: runs PROGRAM ARGS... under ptrace from its first
 * instruction, following its threads (PTRACE_O_TRACECLONE) and reaping
 * their ends with waitpid(__WALL), as gdb does. Every signal the program
 * is sent is passed on to it; the ones it is sent at SIGRTMAX-5 (the
 * sampling clocks' signal) are counted. Prints
 *   "tracer: N signals at SIGRTMAX-5"
 * to stderr at the end and exits with the program's status (125 where
 * ptrace is not allowed). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  const pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) {
      perror("tracer: PTRACE_TRACEME"); /* a sandbox that forbids ptrace */
      _exit(125);
    }
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int sampler_signals = 0, exit_status = 0, options_set = 0;
  for (;;) {
    int status;
    const pid_t pid = waitpid(-1, &status, __WALL);
    if (pid < 0) break;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (pid == child) exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    int deliver = 0;
    const int sig = WSTOPSIG(status);
    if (!options_set && pid == child) {  /* the stop at exec */
      ptrace(PTRACE_SETOPTIONS, pid, NULL, (void*)(long)PTRACE_O_TRACECLONE);
      options_set = 1;
    } else if (status >> 16 != 0) {
      /* an event stop (a new thread): nothing to deliver */
    } else if (sig != SIGSTOP && sig != SIGTRAP) {
      deliver = sig;
      if (sig == SIGRTMAX - 5) ++sampler_signals;
    }
    ptrace(PTRACE_CONT, pid, NULL, (void*)(long)deliver);
  }
  fprintf(stderr, "tracer: %d signals at SIGRTMAX-5\n", sampler_signals);
  return exit_status;
}
