// Prints its environment, then has each way of starting a child print the
// child's: system() and popen() (whose shells glibc starts by itself with
// `environ`), fork + execv, and posix_spawn with `environ`. Traced or not,
// the output must be the same, and every child must still be traced.
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static void print_environment(const char* heading) {
  printf("%s\n", heading);
  for (char** e = environ; *e != NULL; ++e) printf("%s\n", *e);
  fflush(stdout);
}

int main(void) {
  print_environment("-- the program");
  printf("-- system\n");
  fflush(stdout);
  if (system("env") != 0) return 1;

  printf("-- popen\n");
  FILE* pipe = popen("env", "r");
  if (pipe == NULL) return 1;
  char line[4096];
  while (fgets(line, sizeof line, pipe) != NULL) fputs(line, stdout);
  if (pclose(pipe) != 0) return 1;

  printf("-- fork + execv\n");
  fflush(stdout);
  char* env_argv[] = {"env", NULL};
  const pid_t child = fork();
  if (child == 0) {
    execv("/usr/bin/env", env_argv);
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || status != 0) return 1;

  printf("-- posix_spawn\n");
  fflush(stdout);
  pid_t spawned = 0;
  if (posix_spawn(&spawned, "/usr/bin/env", NULL, NULL, env_argv, environ) != 0) return 1;
  if (waitpid(spawned, &status, 0) != spawned || status != 0) return 1;
  return 0;
}
