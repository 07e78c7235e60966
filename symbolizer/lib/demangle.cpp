#include "demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace spoor::symbolizer {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  // Only "_Z" names are mangled; __cxa_demangle would also "demangle" a
  // plain C name such as "f" into a type name ("float").
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace spoor::symbolizer
