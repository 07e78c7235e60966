// What touching fresh memory costs on this machine: maps SIZE MiB, touches
// one byte per 4 KiB page, unmaps, three rounds in one process; the second
// and third rounds get the pages the first one freed.
//
//   spoor_bench_fresh_pages [MIB (64)]
//
// Prints MB/s per round for 2 MiB pages (MADV_HUGEPAGE), 4 KiB pages, and
// 4 KiB pages populated first (MADV_POPULATE_WRITE). On bare metal all of
// them run at several GB/s; on a virtual machine whose host backs guest
// memory lazily, fresh pages cost far more (bench/RESULTS.md).
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void rounds(const char* label, size_t bytes, int huge, int populate) {
  const size_t huge_page = (size_t)2 << 20;
  for (int round = 0; round < 3; ++round) {
    char* map = mmap(NULL, bytes + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
      perror("mmap");
      exit(1);
    }
    // On a 2 MiB boundary, so that every page of it can be a huge one.
    char* at = (char*)(((uintptr_t)map + huge_page - 1) & ~(uintptr_t)(huge_page - 1));
    if (huge) madvise(at, bytes, MADV_HUGEPAGE);
    const double start = now();
    if (populate) madvise(at, bytes, MADV_POPULATE_WRITE);
    for (size_t i = 0; i < bytes; i += 4096) at[i] = 1;
    const double seconds = now() - start;
    printf("%-26s round %d: %4zu MiB in %.3f s = %6.0f MB/s\n", label, round + 1, bytes >> 20, seconds,
           (double)bytes / seconds / 1e6);
    munmap(map, bytes + huge_page);
  }
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64;
  if (mib == 0) {
    fprintf(stderr, "usage: spoor_bench_fresh_pages [MIB]\n");
    return 2;
  }
  rounds("2 MiB pages", mib << 20, 1, 0);
  rounds("4 KiB pages", mib << 20, 0, 0);
  rounds("4 KiB pages, populated", mib << 20, 0, 1);
  return 0;
}
