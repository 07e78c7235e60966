/* A thread's CPU clock across exec: the first image spins FIRST_MS of its
 * own CPU time (argv[1], default 200) and execs this program again, whose
 * second image spins 100 ms more and prints "second: N" with its clock in
 * ns at the end. The kernel's per-thread clock runs on across exec, so the
 * second image starts with the first one's time (and the loader's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long own_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static volatile unsigned long sink;

static void spin_ms(unsigned long long ms) {
  const unsigned long long end = own_cpu_ns() + ms * 1000000ull;
  while (own_cpu_ns() < end)
    for (int i = 0; i < 10000; ++i) sink += (unsigned long)i;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "second") == 0) {
    spin_ms(100);
    printf("second: %llu\n", own_cpu_ns());
    return 0;
  }
  spin_ms(argc > 1 ? strtoull(argv[1], NULL, 10) : 200);
  execl("/proc/self/exe", argv[0], "second", (char*)NULL);
  perror("exec_after_spin: execl");
  return 1;
}
