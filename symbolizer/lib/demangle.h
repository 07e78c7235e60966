// C++ and Rust name demangling for the symbolizer's frames.
#ifndef SPOOR_SYMBOLIZER_DEMANGLE_H
#define SPOOR_SYMBOLIZER_DEMANGLE_H

#include <string>

namespace spoor::symbolizer {

// The demangled form of an Itanium C++ ABI name ("_Z...", as addr2line -C
// prints it) or of a Rust name (v0 "_R...", or legacy "_ZN...17h<hash>E",
// as c++filt prints it), or `name` itself when it is none or does not
// demangle.
std::string demangle(const char* name);

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_DEMANGLE_H
