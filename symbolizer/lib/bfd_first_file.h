// GNU addr2line (binutils 2.40's BFD) names the file of a DWARF 5 line
// table row by file entry 0 until the sequence's first DW_LNS_set_file,
// where DWARF 5 says file 1: rows at the start of a sequence whose code
// comes from a header then show the unit's main source file. libdw reads
// them right; to print what addr2line prints (Options::
// gnu_addr2line_compatible), this scans a unit's line program once for the
// address ranges of such rows.
#ifndef SPOOR_SYMBOLIZER_BFD_FIRST_FILE_H
#define SPOOR_SYMBOLIZER_BFD_FIRST_FILE_H

#include <elfutils/libdw.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace spoor::symbolizer {

// The sorted [low, high) DWARF address ranges of rows that BFD attributes
// to file 0 instead of the file register's 1, in the line program of
// `unit` (its DW_AT_stmt_list in `dwarf`'s .debug_line). Empty for DWARF 4
// and older tables, and when the program cannot be read.
std::vector<std::pair<uint64_t, uint64_t>> bfd_file0_ranges(Dwarf* dwarf, Dwarf_Die* unit);

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_BFD_FIRST_FILE_H
