// A compile unit's line table, read from .debug_line directly into compact
// rows (16 bytes each, and only those a lookup can return; libdw keeps
// every row at ~3x that and sorts them with qsort), and its file names as paths (relative directories under the
// unit's DW_AT_comp_dir, as GNU addr2line shows them).
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
  // at or below it, unless that ends a sequence. False when none.
  bool find(uint64_t address, Row* row) const;

  // File `index` of the table as a path (directory joined), nullptr when
  // out of range. For DWARF 4 and older, index 0 is "???" as in libdw.
  const char* file(uint64_t index) const;

 private:
  // 16 bytes a row. Only rows find() can return are kept: of rows at one
  // address the last, and of consecutive rows that say the same the first.
  struct PackedRow {
    uint64_t address;
    uint32_t line;
    uint16_t file_and_flags;  // file index, kEndSequence, kBfdFile0
    uint16_t column;
  };
  static constexpr uint16_t kFileMask = 0x3fff;
  static constexpr uint16_t kEndSequence = 0x4000;
  static constexpr uint16_t kBfdFile0 = 0x8000;
  std::vector<PackedRow> rows_;  // sorted by address
  std::vector<std::pair<uint64_t, uint16_t>> discriminators_;  // by row address, non-zero only
  std::vector<std::string> files_;
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_LINE_TABLE_H
