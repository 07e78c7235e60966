#include "demangle.h"

#include <cxxabi.h>
#include <libiberty/demangle.h>

#include <cstdlib>

namespace spoor::symbolizer {
namespace {

// malloc'd text from a demangler, as a string; "" for null.
std::string taken(char* out) {
  if (out == nullptr) return {};
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  // Only "_Z" and "_R" names are mangled; __cxa_demangle would also
  // "demangle" a plain C name such as "f" into a type name ("float").
  if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R')) return name;
  // Rust's names: v0 ("_R...") and the legacy form, an Itanium name whose
  // last part is a hash ("..17h<16 hex digits>E") and whose parts escape
  // <, > and , as $LT$, $GT$, $C$. libiberty's Rust demangler reads both
  // (as c++filt and perf print them: "hashbrown::raw::RawTable<T,A>::
  // reserve", no hash) and refuses anything else.
  std::string rust = taken(rust_demangle(name, DMGL_PARAMS | DMGL_ANSI));
  if (!rust.empty()) return rust;
  if (name[1] != 'Z') return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  return taken(out);
}

}  // namespace spoor::symbolizer
