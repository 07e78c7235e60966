// The reference-columns layout of a COMPRESSED block (docs/FORMAT.md,
// layout 2, since format 1.2): the record-columns layout (record_columns.h)
// with what still cost most bytes on heap traces modelled away:
//
//   times     each record's time minus the previous record's of the same
//             stream, as a zigzag LEB128 varint, grouped by key word (a
//             Free follows an Alloc after about as long each time); in
//             layout 3 (since format 1.5) divided by the step all of a key
//             word's differences are multiples of (time_steps.h); layout 4
//             (since 1.6) keeps bodies over kMaxPlanarWidth bytes in rows
//             (column_layout.h)
//   pointers  an 8-byte word of a fixed-size body whose first value is at
//             least 2^32, and not a time close to its record's own,
//             becomes a reference column: a value seen before in
//             the run is written as the rank of its last occurrence among
//             the still-live ones of its column (live_ranks.h) plus that
//             column's number, a new value as a literal. So a free() names
//             which of the live blocks it frees (about 10 bits with 1024
//             live), a malloc() which of the freed chunks it got back
//             (a few bits), instead of 2-3 bytes of address each
//
// Like layout 1 it needs no event descriptor. The cost on the packing
// thread: a hash lookup, a short count of live entries and a class list's
// upkeep per reference word (reference_model.h).
#ifndef SPOOR_COMPRESS_REFERENCE_COLUMNS_H
#define SPOOR_COMPRESS_REFERENCE_COLUMNS_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "record_columns.h"

namespace spoor::compress {

// Takes the layout's bytes piece by piece, in order; each piece is used
// up before the call returns (its memory is reused for the next). False
// stops the writing.
using PieceSink = std::function<bool(const uint8_t* data, size_t size)>;

// Rearranges runs of blocks into the layout, keeping its scratch memory and
// the model's from one run to the next (reference_split.cpp): one per
// packing thread. Nothing is allocated per record; on heap traces about
// 60 ns per record, two thirds of it the model (bench/RESULTS.md).
//
// The layout is not gathered into one buffer: write() hands its sections
// to a sink (the packer's zstd stream) where they lie. A run's layout is
// as large as the run; a buffer for it would be megabytes more to fault in
// and one more pass of copying on each packing thread.
class ReferenceSplitter {
 public:
  ReferenceSplitter();
  ~ReferenceSplitter();
  ReferenceSplitter(const ReferenceSplitter&) = delete;
  ReferenceSplitter& operator=(const ReferenceSplitter&) = delete;

  // Rearranges `blocks` (complete blocks back to back) into layout 2,
  // layout 3 with `time_steps`, or layout 4 with both. Returns false when
  // some block is cut short or some packet's records do not walk exactly
  // to its end. After true, bytes() is the layout's size and write()
  // passes it on, until the next split().
  bool split(std::span<const uint8_t> blocks, ColumnsInfo& info, bool time_steps, bool wide_in_rows);
  size_t bytes() const;
  // False when the sink said so.
  bool write(const PieceSink& sink);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The inverse: rebuilds the blocks of layout 2, 3 (`time_steps`) or 4
// (`time_steps` and `wide_in_rows`), exactly `raw_size` bytes, into `out`.
// Returns false with `problem` saying what does not add up (a section
// running past the data, a reference to no live value, bytes left over).
bool join_referenced(std::span<const uint8_t> packed, const ColumnsInfo& info, uint32_t raw_size,
                     bool time_steps, bool wide_in_rows, ExpandedBytes& out, std::string& problem);

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_REFERENCE_COLUMNS_H
