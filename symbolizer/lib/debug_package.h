// What to install for a module's missing debug info, on Debian.
#ifndef SPOOR_SYMBOLIZER_DEBUG_PACKAGE_H
#define SPOOR_SYMBOLIZER_DEBUG_PACKAGE_H

#include <string>

namespace spoor::symbolizer {

// The package that owns `path` according to `dpkg -S` (without the
// ":arch" suffix), or "" when dpkg is absent or no package owns it. Runs a
// process: call it once per module, never per address.
std::string owning_package(const std::string& path);

// The message for a module without DWARF: names the -dbgsym package when
// the file belongs to one, else says what the debugger looks for.
std::string missing_debug_info_message(const std::string& path);

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_DEBUG_PACKAGE_H
