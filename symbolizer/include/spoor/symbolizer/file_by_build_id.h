// Finding a module's ELF file by its build ID when the path the trace
// recorded no longer holds it: the file was deleted, upgraded since the
// recording (a new build at the same path), or the trace was taken on
// another machine.
#ifndef SPOOR_SYMBOLIZER_FILE_BY_BUILD_ID_H
#define SPOOR_SYMBOLIZER_FILE_BY_BUILD_ID_H

#include <cstdint>
#include <string>
#include <vector>

#include "spoor/symbolizer/symbolizer.h"

namespace spoor::symbolizer {

// What the file is wanted for: naming addresses (symbols and DWARF; a
// separate debug file serves) or unwinding (the code's own CFI,
// .eh_frame, which a debug file holds no bytes of).
enum class FileUse : uint8_t { symbols, unwinding };

struct FoundFile {
  std::string path;         // "" when nothing was found
  std::string where;        // "--debug-dir DIR", "/usr/lib/debug", "debuginfod": for messages
  bool debug_only = false;  // a separate debug file (symbols and DWARF, no code)
};

// Looks for the file whose GNU build ID is `build_id`, in this order: each
// --debug-dir's and the system's (under the sysroot) `.build-id/xx/rest`
// (the binary, as build-id trees link it) and, for FileUse::symbols,
// `.build-id/xx/rest.debug` (its separate debug file); then, when
// DEBUGINFOD_URLS is set, the debuginfod servers it lists, executable
// first, then (for symbols) debug info, through libdebuginfod, which
// caches what it fetches. Returns an empty path when none holds it.
FoundFile file_by_build_id(const std::vector<uint8_t>& build_id, const Options& options,
                           FileUse use = FileUse::symbols);

// Where file_by_build_id looks, for a message when it found nothing:
// "under /usr/lib/debug/.build-id, nor from debuginfod (DEBUGINFOD_URLS
// is not set)".
std::string build_id_search_places(const Options& options);

// True when DEBUGINFOD_URLS names at least one server.
bool debuginfod_configured();

// A build ID as lowercase hex, as readelf and the .build-id trees write it.
std::string build_id_hex(const uint8_t* bytes, size_t size);

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_FILE_BY_BUILD_ID_H
