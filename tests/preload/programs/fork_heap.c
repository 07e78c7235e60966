/* Forks 200 times with 64 MiB of its heap touched, so that each fork's
 * copy of the page tables is most of the program's CPU time; each child
 * exits at once. Exits 0. (threads_test.cpp: where those samples land.) */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  const size_t bytes = (size_t)64 << 20;
  char* heap = malloc(bytes);
  if (heap == NULL) return 2;
  memset(heap, 1, bytes);
  for (int i = 0; i < 200; ++i) {
    const pid_t child = fork();
    if (child < 0) return 3;
    if (child == 0) _exit(0);
    if (waitpid(child, NULL, 0) != child) return 4;
  }
  return heap[bytes / 2] == 1 ? 0 : 5;
}
