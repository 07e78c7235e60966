/* Allocates from 2^14 distinct call paths, far more stacks than the stack
 * table's first level holds: allocation v (of 100000 + v bytes) is made at
 * the end of a chain of 14 calls, the k-th to one() when bit k of v is set,
 * else to zero(). Every path is taken in three passes; a fork child made
 * after the first one takes the other two with it, in a table of its own.
 * Prints where zero, one and main are. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define BITS 14
#define BASE 100000

void* one(int depth, unsigned v);

__attribute__((noinline)) void* zero(int depth, unsigned v) {
  void* p = depth + 1 == BITS ? malloc(BASE + v) : ((v >> (depth + 1)) & 1) ? one(depth + 1, v) : zero(depth + 1, v);
  __asm__ volatile("" ::: "memory"); /* no tail call: every link stays on the stack */
  return p;
}

__attribute__((noinline)) void* one(int depth, unsigned v) {
  void* p = depth + 1 == BITS ? malloc(BASE + v) : ((v >> (depth + 1)) & 1) ? one(depth + 1, v) : zero(depth + 1, v);
  __asm__ volatile("" ::: "memory");
  return p;
}

static void every_path(void) {
  for (unsigned v = 0; v < (1u << BITS); ++v) {
    void* p = (v & 1) ? one(0, v) : zero(0, v);
    __asm__ volatile("" ::: "memory");
    free(p);
  }
}

int main(void) {
  char line[160];
  /* snprintf into a stack buffer does not allocate. */
  int n = snprintf(line, sizeof line, "zero=%p one=%p main=%p bits=%d base=%d\n", (void*)zero, (void*)one,
                   (void*)main, BITS, BASE);
  if (write(1, line, (size_t)n) < 0) return 1;
  /* One call site for every pass: the stacks of one path are the same. */
  pid_t child = -1;
  for (int pass = 0; pass < 3; ++pass) {
    if (pass == 1 && (child = fork()) < 0) return 1;
    every_path();
  }
  if (child == 0) _exit(0);
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  return 0;
}
