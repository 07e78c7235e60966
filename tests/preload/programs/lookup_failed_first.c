/* A program whose first allocator calls come from dlerror() after a failed
 * dlsym, before any constructor runs (from .preinit_array, as the runtime of
 * a clang -fsanitize=undefined build does): the shim's free and realloc are
 * then looked up inside glibc's dlerror bookkeeping. Prints what dlerror
 * said, then "ok". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static char said[256];

static void look_up_a_missing_symbol(void) {
  if (dlsym(RTLD_DEFAULT, "spoor_test_no_such_symbol") == NULL) {
    const char* e = dlerror();
    snprintf(said, sizeof said, "%s", e != NULL && strstr(e, "undefined symbol") != NULL ? "undefined symbol" : "?");
  }
}

__attribute__((section(".preinit_array"), used)) static void (*run_before_constructors)(void) =
    look_up_a_missing_symbol;

int main(void) {
  printf("%s\nok\n", said);
  return 0;
}
