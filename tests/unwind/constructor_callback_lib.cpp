// A library whose constructor calls back into the program that dlopens it,
// so the callback runs under the dynamic loader: dlopen's and ld.so's
// frames (_dl_open, _dl_init) lie beyond it on the stack. The program
// exports the callback as spoor_test_in_constructor.
#include <dlfcn.h>

__attribute__((constructor)) static void call_back_into_the_program() {
  auto* callback = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "spoor_test_in_constructor"));
  if (callback != nullptr) callback();
}
