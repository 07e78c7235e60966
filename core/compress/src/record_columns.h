// The record-columns layout of a COMPRESSED block (docs/FORMAT.md): a
// reversible rearrangement of a run of blocks that lets zstd see like with
// like. Records are self-delimiting (size, key, time at fixed places), so
// this needs no event descriptor:
//
//   block section  every block as it is, except that PACKET blocks stop
//                  after their 48-byte header (their records move below)
//   sizes          u16 size + u16 key of each record, in order
//   times          each record's 48-bit time minus the previous record's
//                  (mod 2^48; the first is minus 0), as 6-byte values
//                  stored byte plane by byte plane (all low bytes first)
//   bodies         the rest of each record, grouped by key word (ascending);
//                  a group whose records are all one size is stored byte
//                  plane by byte plane, so a pointer's constant high bytes
//                  and a counter's zero bytes become long runs
//
// Each step costs a few nanoseconds per record; zstd's match finder then
// does the rest (about 10x on heap traces against 3x without this).
#ifndef SPOOR_COMPRESS_RECORD_COLUMNS_H
#define SPOOR_COMPRESS_RECORD_COLUMNS_H

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spoor/compress/huge_pages.h"

namespace spoor::compress {

struct ColumnsInfo {
  uint32_t blocks_size = 0;   // bytes of the block section
  uint32_t record_count = 0;  // records in the columns
};

// Rearranges `blocks` (complete blocks back to back) into `out`. Returns
// false, leaving `out` unspecified, when some block is cut short or some
// packet's records do not walk exactly to its end (then the caller keeps
// the blocks as they are: kLayoutBlocks).
bool split_records(std::span<const uint8_t> blocks, PageBuffer& out, ColumnsInfo& info);

// The inverse: rebuilds the blocks, exactly `raw_size` bytes, into `out`.
// Returns false with `problem` saying what does not add up (a section
// running past the data, a packet whose records overrun it, bytes left
// over).
bool join_records(std::span<const uint8_t> packed, const ColumnsInfo& info, uint32_t raw_size,
                  ExpandedBytes& out, std::string& problem);

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_RECORD_COLUMNS_H
