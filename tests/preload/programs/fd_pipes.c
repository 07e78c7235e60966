// Makes descriptors without opening a path, then forks and moves bytes
// through them: 100 bytes parent -> child through a pipe, 10 bytes child ->
// parent through a socketpair, 8 into an eventfd and 5 into a memfd.
// Prints "pipe:[P] socket:[S0] socket:[S1]" (the pipe's and the socketpair
// ends' inodes) so that a test can find them in the trace.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long inode(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? (unsigned long)st.st_ino : 0;
}

int main(void) {
  int p[2], s[2];
  if (pipe(p) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0) return 1;
  const int ev = eventfd(0, 0), mem = memfd_create("spoor-test", 0);
  if (ev < 0 || mem < 0) return 2;
  printf("pipe:[%lu] socket:[%lu] socket:[%lu]\n", inode(p[0]), inode(s[0]), inode(s[1]));
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 3;
  if (child == 0) {
    close(p[1]);
    close(s[0]);
    char buffer[64];
    ssize_t got, total = 0;
    while ((got = read(p[0], buffer, sizeof buffer)) > 0) total += got;
    if (total != 100) return 4;
    return write(s[1], "0123456789", 10) == 10 ? 0 : 5;
  }
  close(p[0]);
  close(s[1]);
  char bytes[100];
  memset(bytes, 'p', sizeof bytes);
  if (write(p[1], bytes, sizeof bytes) != 100) return 6;
  close(p[1]);
  char answer[10];
  ssize_t got, total = 0;
  while (total < 10 && (got = read(s[0], answer + total, sizeof answer - (size_t)total)) > 0) total += got;
  const uint64_t one = 1;
  if (total != 10 || write(ev, &one, sizeof one) != 8 || write(mem, "memfd", 5) != 5) return 7;
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 8;
  return 0;
}
