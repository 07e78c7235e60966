// Printing a Location the way GNU addr2line prints it, so that
// `spoor symbolize -f -i -C -e ELF` diffs line by line against
// `addr2line -f -i -C -e ELF`.
#ifndef SPOOR_CLI_ADDR2LINE_FORMAT_H
#define SPOOR_CLI_ADDR2LINE_FORMAT_H

#include <cstdint>
#include <string>

#include "spoor/symbolizer/symbolizer.h"

namespace spoor::cli {

struct Addr2lineStyle {
  bool addresses = false;  // -a: the address first
  bool functions = false;  // -f: function names
  bool inlines = false;    // -i: the frames an address was inlined into
  bool pretty = false;     // -p: one line per address
  bool basenames = false;  // -s: file names without directories
};

// Appends what addr2line prints for `address`: "??"/"??:0" when nothing is
// known, "file:?" when a line is unknown, " (discriminator N)" after a
// line that has one, and with -p the " (inlined by) " joins.
void append_addr2line(std::string& out, uint64_t address, const symbolizer::Location& location,
                      const Addr2lineStyle& style);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_ADDR2LINE_FORMAT_H
