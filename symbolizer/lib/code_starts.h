// Where each function of a module begins, from its .eh_frame_hdr search
// table: the start of every FDE (call frame information entry), which
// compilers emit one per function and one per cold part. A stripped
// library's addresses group by these into functions without names.
//
// The table is read as GNU ld, gold, lld and mold write it (version 1, its
// entries 4-byte offsets from the header: DW_EH_PE_datarel|sdata4); a
// module whose table is written otherwise, or that has none, has no starts.
#ifndef SPOOR_SYMBOLIZER_CODE_STARTS_H
#define SPOOR_SYMBOLIZER_CODE_STARTS_H

#include <libelf.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace spoor::symbolizer {

class CodeStarts {
 public:
  CodeStarts() = default;
  explicit CodeStarts(Elf* elf);

  // The last start at or before `address` (an ELF virtual address). The
  // caller checks that some FDE covers the address: the table lists where
  // entries begin, not where they end.
  std::optional<uint64_t> at_or_before(uint64_t address) const;

 private:
  std::vector<uint64_t> starts_;  // sorted
};

}  // namespace spoor::symbolizer

#endif  // SPOOR_SYMBOLIZER_CODE_STARTS_H
