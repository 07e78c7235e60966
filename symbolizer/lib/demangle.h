// C++ name demangling for the symbolizer's frames.
#ifndef SPOOR_SYMBOLIZER_DEMANGLE_H
#define SPOOR_SYMBOLIZER_DEMANGLE_H

#include <string>

namespace spoor::symbolizer {

// The demangled form of an Itanium C++ ABI name ("_Z..."), or `name`
// itself when it is not one or does not demangle, as addr2line -C prints it.
std::string demangle(const char* name);

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_DEMANGLE_H
