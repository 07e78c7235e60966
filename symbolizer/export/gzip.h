// gzip (RFC 1952) with zlib, as pprof wants its profile.proto on disk.
#ifndef SPOOR_EXPORT_GZIP_H
#define SPOOR_EXPORT_GZIP_H

#include <optional>
#include <string>
#include <string_view>

namespace spoor::exporter {

// The gzip member holding `bytes`; nullopt when zlib fails (out of memory).
std::optional<std::string> gzip(std::string_view bytes);

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_GZIP_H
