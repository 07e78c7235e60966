// Allocates with new and delete, whose definitions (slow_new.cpp) spend
// their time in burn_in_allocator, for about 0.3 s of CPU time.
#include <cstdio>
#include <ctime>

static double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// Through a volatile pointer: a new and delete pair whose block never
// escapes may be left out by the compiler.
int* volatile g_block;

int main() {
  long n = 0;
  const double end = cpu_seconds() + 0.3;
  while (cpu_seconds() < end) {
    for (int i = 0; i < 10; ++i) {
      g_block = new int(i);
      n += *g_block + 1;
      delete g_block;
    }
  }
  std::printf("%d\n", n > 0);
  return 0;
}
