/* A program that closes every descriptor, then puts files of its own on
 * the lowest 64 numbers from 3 and on the top 64 below its limit: where
 * libunwind's address-check pipe was made (at the lowest free numbers of
 * its first walk) or where the shim used to move it. Then it allocates
 * from call sites walked for the first time (without cached unwind rules,
 * SPOOR_RULE_CACHE=off, those walks are libunwind's), which check the
 * addresses they read through that pipe's numbers: kept, libunwind read a
 * byte of such a file, wrote a byte of memory into it, or closed it.
 * Prints "unchanged" when every file still holds what was written to it,
 * at offset 0, and is still open; else what changed.
 *
 * Everything but closefrom, dup2 and the calls after the files are in
 * place is a raw system call, so that no other call takes a walk. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kEach = 64 };
static const char kContent[] = "the program's own file, which nothing else reads or writes\n";

static int open_file(const char* path, int i) {
  char name[256];
  snprintf(name, sizeof name, "%s.%d", path, i);
  const int fd = (int)syscall(SYS_openat, AT_FDCWD, name, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || syscall(SYS_write, fd, kContent, sizeof kContent - 1) != (long)(sizeof kContent - 1) ||
      syscall(SYS_lseek, fd, 0, SEEK_SET) != 0 || syscall(SYS_unlinkat, AT_FDCWD, name, 0) != 0) {
    perror(name);
    exit(1);
  }
  return fd;
}

static void* allocate(void* arg) {
  for (int i = 0; i < 16; ++i) free(malloc(64 + (size_t)i));
  return arg;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/tmp/spoor-shim-numbers";
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  const int top = limit.rlim_cur < 1024 ? (int)limit.rlim_cur : 1024;
  if (top < 3 + 2 * kEach) return 2;
  int numbers[2 * kEach], count = 0;

  closefrom(3);
  for (int i = 0; i < kEach; ++i) {
    const int fd = open_file(path, count);
    const int number = top - kEach + i;
    if (dup2(fd, number) != number) {
      perror("dup2");
      return 1;
    }
    syscall(SYS_close, fd);
    numbers[count++] = number;
  }
  for (int i = 0; i < kEach; ++i) numbers[count] = open_file(path, count), ++count;

  // Call sites walked after the files are in place: standard output's
  // buffer (malloc under printf), a thread.
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
  }
  if (!changed) printf("unchanged\n");
  return 0;
}
