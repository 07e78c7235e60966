/* Loads and unloads libz at run time, allocating around both. */
#include <dlfcn.h>
#include <stdlib.h>

static void churn(void) {
  for (int i = 0; i < 4; ++i) {
    void* volatile p = malloc(64);
    free(p);
  }
}

int main(void) {
  churn();
  void* z = dlopen("libz.so.1", RTLD_NOW);
  if (z == NULL) return 2;
  churn();
  if (dlclose(z) != 0) return 3;
  churn();
  return 0;
}
