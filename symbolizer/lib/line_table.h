// A compile unit's line table, read from .debug_line directly into compact
// rows (24 bytes each; libdw keeps ~3x that per row and sorts them with
// qsort), and its file names composed exactly as libdw composes them.
//
// It also marks the rows GNU addr2line (binutils 2.40's BFD) attributes to
// file entry 0 of a DWARF 5 table: those before the first DW_LNS_set_file
// of their sequence, where DWARF 5 says file 1 (Options::
// gnu_addr2line_compatible reproduces that).
#ifndef SPOOR_SYMBOLIZER_LINE_TABLE_H
#define SPOOR_SYMBOLIZER_LINE_TABLE_H

#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spoor::symbolizer {

class LineTable {
 public:
  struct Row {
    uint64_t address;
    uint32_t line;
    uint16_t file;
    uint16_t column;         // clamped to 65535
    uint16_t discriminator;  // clamped to 65535
    bool end_sequence;
    bool bfd_file0;  // before its sequence's first DW_LNS_set_file, in a DWARF 5 table
  };

  // Reads the line program at `unit`'s DW_AT_stmt_list. nullopt when the
  // unit has none or it cannot be read (a malformed program, an
  // unsupported form): the caller falls back to libdw.
  static std::optional<LineTable> read(Dwarf* dwarf, Dwarf_Die* unit);

  // The row covering `address`, as dwarf_getsrc_die picks it: the last row
  // at or below it, unless that ends a sequence. nullptr when none.
  const Row* find(uint64_t address) const;

  // File `index` of the table as a path (directory joined), nullptr when
  // out of range. For DWARF 4 and older, index 0 is "???" as in libdw.
  const char* file(uint64_t index) const;

 private:
  std::vector<Row> rows_;  // sorted by address; an end_sequence row first among equals
  std::vector<std::string> files_;
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_LINE_TABLE_H
