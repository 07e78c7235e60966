/* A program that closes every descriptor, then puts files of its own on
 * the numbers the shim kept at the top of its range (found by looking
 * before the close: the numbers open at or above the limit less 64) with
 * dup2. Each dup2 is recorded with its stack, and a first walk of a new
 * call site (with no cached unwind rules, SPOOR_RULE_CACHE=off) is
 * libunwind's, which checks the addresses it reads through a pipe whose
 * numbers it keeps: it read a byte of such a file, wrote a byte of memory
 * into it, or closed it. Prints "unchanged" when every file still holds
 * what was written to it, at offset 0, and is still open; else what
 * changed. Untraced there is nothing at those numbers to find, and the
 * limit less 64 stands in.
 *
 * Everything but closefrom, dup2 and the calls after them is a raw system
 * call, so that no other call takes a walk (the first few of a thread
 * are libunwind's). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kMost = 16 };
static const char kContent[] = "the program's own file, which nothing else reads or writes\n";

static void* allocate(void* arg) {
  for (int i = 0; i < 16; ++i) free(malloc(64 + (size_t)i));
  return arg;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/tmp/spoor-shim-numbers";
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  const int top = limit.rlim_cur < 1024 ? (int)limit.rlim_cur : 1024;
  int numbers[kMost], count = 0;
  for (int fd = top - 64; fd < top && count < kMost; ++fd)
    if (syscall(SYS_fcntl, fd, F_GETFD) >= 0) numbers[count++] = fd;
  if (count == 0) numbers[count++] = top - 64;

  closefrom(3);
  for (int i = 0; i < count; ++i) {
    char name[256];
    snprintf(name, sizeof name, "%s.%d", path, i);
    const int fd = (int)syscall(SYS_openat, AT_FDCWD, name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || syscall(SYS_write, fd, kContent, sizeof kContent - 1) != (long)(sizeof kContent - 1) ||
        syscall(SYS_lseek, fd, 0, SEEK_SET) != 0 || dup2(fd, numbers[i]) != numbers[i]) {
      perror(name);
      return 1;
    }
    syscall(SYS_close, fd);
  }
  // Other call sites, walked after the files are in place: standard
  // output's buffer (malloc under printf), a thread.
  printf("files in place\n");
  fflush(stdout);
  pthread_t thread;
  pthread_create(&thread, NULL, allocate, NULL);
  pthread_join(thread, NULL);

  int changed = 0;
  for (int i = 0; i < count; ++i) {
    char got[sizeof kContent + 16] = {0};
    const long at = syscall(SYS_lseek, numbers[i], 0, SEEK_CUR);
    const long n = syscall(SYS_pread64, numbers[i], got, sizeof got, 0);
    if (at != 0 || n != (long)(sizeof kContent - 1) || memcmp(got, kContent, sizeof kContent - 1) != 0) {
      printf("descriptor %d: offset %ld, %ld bytes%s\n", numbers[i], at, n, n < 0 ? " (closed)" : "");
      changed = 1;
    }
    char name[256];
    snprintf(name, sizeof name, "%s.%d", path, i);
    syscall(SYS_unlinkat, AT_FDCWD, name, 0);
  }
  if (!changed) printf("unchanged\n");
  return 0;
}
