/* Loads a module (argv[1]), then spins on the CPU for argv[2]
 * milliseconds of its own CPU time, calling nothing the shim hooks, so
 * that CPU samples land while the shim has a module scan pending. Defines
 * dl_iterate_phdr, which the shim's calls reach as well: it counts the
 * calls the shim's own code makes while the program spins, which only its
 * signal handler can make (the program is one thread, and the loop calls
 * nothing but the clock in the vDSO), then hands the call to the C
 * library's. The loader's lock it takes may be half taken by the code a
 * signal interrupted: such a call can wait forever. Prints the count. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t spinning;
static volatile sig_atomic_t calls_while_spinning;

int dl_iterate_phdr(int (*callback)(struct dl_phdr_info*, size_t, void*), void* data) {
  static int (*real)(int (*)(struct dl_phdr_info*, size_t, void*), void*);
  Dl_info caller;
  if (spinning && dladdr(__builtin_return_address(0), &caller) != 0 && caller.dli_fname != NULL &&
      strstr(caller.dli_fname, "libspoor-preload") != NULL)
    ++calls_while_spinning;
  if (real == NULL) real = (int (*)(int (*)(struct dl_phdr_info*, size_t, void*), void*))dlsym(RTLD_NEXT, "dl_iterate_phdr");
  return real(callback, data);
}

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long spin(double ms) {
  unsigned long x = 1;
  const double until = cpu_ms() + ms;
  while (cpu_ms() < until)
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  return x;
}

int main(int argc, char** argv) {
  if (argc < 3) return 1;
  void* module = dlopen(argv[1], RTLD_NOW);
  if (module == NULL) return 2;
  spinning = 1;
  const unsigned long x = spin(atof(argv[2]));
  spinning = 0;
  printf("%d calls of dl_iterate_phdr by the shim while spinning (%lu)\n", (int)calls_while_spinning, x & 1);
  return 0;
}
