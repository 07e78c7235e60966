/* Loads and unloads a module at run time (argv[1], a library of the
 * tests' own: no library the shim itself depends on, which the loader
 * would keep loaded), allocating around both. */
#include <dlfcn.h>
#include <stdlib.h>

static void churn(void) {
  for (int i = 0; i < 4; ++i) {
    void* volatile p = malloc(64);
    free(p);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) return 1;
  churn();
  void* module = dlopen(argv[1], RTLD_NOW);
  if (module == NULL) return 2;
  churn();
  if (dlclose(module) != 0) return 3;
  churn();
  return 0;
}
