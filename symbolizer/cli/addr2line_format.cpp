#include "addr2line_format.h"

#include <cinttypes>
#include <cstdio>

namespace spoor::cli {

void append_addr2line(std::string& out, uint64_t address, const symbolizer::Location& location,
                      const Addr2lineStyle& style) {
  if (style.addresses) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%016" PRIx64, address);
    out += buf;
    out += style.pretty ? ": " : "\n";
  }
  if (!location.resolved) {
    if (style.functions) out += style.pretty ? "?? " : "??\n";
    out += "??:0\n";
    return;
  }
  const size_t shown = style.inlines ? location.frames.size() : 1;
  for (size_t i = 0; i < shown; ++i) {
    const symbolizer::SourceFrame& frame = location.frames[i];
    if (i > 0 && style.pretty) out += " (inlined by) ";
    if (style.functions) {
      out += frame.function.empty() ? "??" : frame.function;
      out += style.pretty ? " at " : "\n";
    }
    std::string_view file = frame.file;
    if (file.empty()) file = "??";
    if (style.basenames && file.rfind('/') != std::string_view::npos) file = file.substr(file.rfind('/') + 1);
    out += file;
    out += ':';
    if (frame.line == 0) {
      out += "?\n";
      continue;
    }
    out += std::to_string(frame.line);
    // addr2line keeps the innermost line's discriminator for the whole chain.
    const uint32_t discriminator = location.frames[0].discriminator;
    if (discriminator != 0) out += " (discriminator " + std::to_string(discriminator) + ")";
    out += '\n';
  }
}

}  // namespace spoor::cli
