/* The process's descriptor table, listed every way a program lists a
 * directory, one line each: "HOW: N N N ...", the numbers sorted.
 * Untraced and traced the lines are the same when the shim's own
 * descriptors are left out of each listing (record_test.cpp).
 *
 *   opendir-relative  opendir("fd") from the /proc/self directory
 *   readdir_r         readdir_r on opendir("/proc/self/fd")
 *   scandir           scandir("/proc/self/fd"), no filter
 *   scandir-filter    the same with a filter that keeps odd numbers
 *   scandirat         scandirat(a descriptor of /proc/self, "fd")
 *   scandir-cwd       scandir("fd") from the /proc/self directory
 *   getdents64        glibc's getdents64 wrapper, 64-byte reads
 *   syscall           syscall(SYS_getdents64), 64-byte reads */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kMost = 4096 };
static int numbers[kMost];
static int count;

static void note(const char* name) {
  if (name[0] < '0' || name[0] > '9' || count == kMost) return;
  numbers[count++] = atoi(name);
}

static int by_value(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

static void print(const char* how) {
  qsort(numbers, count, sizeof numbers[0], by_value);
  printf("%s:", how);
  for (int i = 0; i < count; ++i) printf(" %d", numbers[i]);
  printf("\n");
  count = 0;
}

static void by_readdir(DIR* dir) {
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) note(entry->d_name);
  closedir(dir);
}

static int odd(const struct dirent* entry) { return atoi(entry->d_name) % 2 == 1; }

static struct dirent** list;
static void scanned(int n) {
  if (n < 0) {
    perror("scandir");
    exit(1);
  }
  for (int i = 0; i < n; ++i) {
    note(list[i]->d_name);
    free(list[i]);
  }
  free(list);
}

/* getdents64's records, read 64 bytes at a time: a read can hold nothing
 * but the shim's. */
struct record {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};
static void by_records(int fd, int raw) {
  char buffer[64] __attribute__((aligned(8)));
  for (;;) {
    const long got = raw ? syscall(SYS_getdents64, fd, buffer, sizeof buffer)
                         : (long)getdents64(fd, buffer, sizeof buffer);
    if (got < 0) {
      perror("getdents64");
      exit(1);
    }
    if (got == 0) break;
    for (long at = 0; at < got; at += ((struct record*)(buffer + at))->reclen)
      note(((struct record*)(buffer + at))->name);
  }
  close(fd);
}

int main(void) {
  if (chdir("/proc/self") != 0) {
    perror("chdir");
    return 1;
  }
  by_readdir(opendir("fd"));
  print("opendir-relative");

  DIR* dir = opendir("/proc/self/fd");
  struct dirent entry;
  /* Deprecated in glibc, still called by older programs. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  struct dirent* result;
  while (readdir_r(dir, &entry, &result) == 0 && result != NULL) note(result->d_name);
  closedir(dir);
  print("readdir_r");

  scanned(scandir("/proc/self/fd", &list, NULL, alphasort));
  print("scandir");
  scanned(scandir("/proc/self/fd", &list, odd, alphasort));
  print("scandir-filter");
  const int self = open("/proc/self", O_RDONLY | O_DIRECTORY);
  scanned(scandirat(self, "fd", &list, NULL, alphasort));
  close(self);
  print("scandirat");
  scanned(scandir("fd", &list, NULL, alphasort));
  print("scandir-cwd");

  by_records(open("/proc/self/fd", O_RDONLY | O_DIRECTORY), 0);
  print("getdents64");
  by_records(open("/proc/self/fd", O_RDONLY | O_DIRECTORY), 1);
  print("syscall");
  return 0;
}
