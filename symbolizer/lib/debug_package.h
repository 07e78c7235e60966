// What to install for a module's missing debug info, on Debian.
#ifndef SPOOR_SYMBOLIZER_DEBUG_PACKAGE_H
#define SPOOR_SYMBOLIZER_DEBUG_PACKAGE_H

#include <string>

namespace spoor::symbolizer {

// The package that owns `path` as `dpkg -S` would say (without the
// ":arch" suffix), from dpkg's file lists, read at the first call (~0.1 s);
// "" when there is no dpkg database or no package owns it.
std::string owning_package(const std::string& path);

// The message for a module without DWARF: names the -dbgsym package when
// the file belongs to one, else says what the debugger looks for.
std::string missing_debug_info_message(const std::string& path);

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_DEBUG_PACKAGE_H
