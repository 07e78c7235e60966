/* Three vfork children whose exec fails, each ending with _exit(127): a
 * vfork child shares its parent's memory, so the shim writes nothing for
 * it, and only the parent's waitpid tells of it. Then one whose exec
 * works (/bin/true). Exits 0. */
#include <sys/wait.h>
#include <unistd.h>

static int run_child(const char* path) {
  const pid_t child = vfork();
  if (child == 0) {
    execl(path, path, (char*)0);
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void) {
  for (int i = 0; i < 3; ++i)
    if (run_child("/nonexistent/spoor-test") != 127) return 1;
  return run_child("/bin/true") == 0 ? 0 : 2;
}
