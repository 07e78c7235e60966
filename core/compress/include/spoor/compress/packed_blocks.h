// COMPRESSED blocks (docs/FORMAT.md): a run of complete blocks packed into
// one zstd frame, and expanded again. The writers' sinks pack, the reader
// expands; both sides share this code so they cannot disagree.
#ifndef SPOOR_COMPRESS_PACKED_BLOCKS_H
#define SPOOR_COMPRESS_PACKED_BLOCKS_H

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "spoor/compress/huge_pages.h"
#include "spoor/format.h"

namespace spoor::compress {

// zstd's level: 3 is zstd's default; 6 is where the record-columns layout
// stops gaining much on heap traces (bench/RESULTS.md).
inline constexpr int kDefaultLevel = 6;

// Packs runs of blocks. Keeps one zstd context (its tables are the costly
// part) and scratch space between calls: one Packer per thread.
class Packer {
 public:
  // `layout`: kLayoutWideRows (what writers use since format 1.6),
  // kLayoutStepTimes (1.5's), kLayoutReferenceColumns (1.2's) and
  // kLayoutRecordColumns (1.1's), kept
  // to test that readers still read them, or kLayoutBlocks.
  explicit Packer(int level = kDefaultLevel, uint16_t layout = format::kLayoutWideRows);
  ~Packer();
  Packer(const Packer&) = delete;
  Packer& operator=(const Packer&) = delete;

  // Writes the payload of a COMPRESSED block holding `blocks` (complete
  // blocks back to back, at most 64 MiB, none of them COMPRESSED) into
  // `payload`: the CompressedBlock header, then the zstd frame. Records are
  // moved into the layout's columns when every packet's records walk
  // cleanly, else the blocks are compressed as they are. Returns false with *problem set when
  // zstd fails or the run is too large.
  bool pack(std::span<const uint8_t> blocks, std::vector<uint8_t>& payload, std::string* problem);

  // zstd's level for the next pack() calls; the layout and the scratch
  // memory stay.
  void set_level(int level);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Expands the payload of a COMPRESSED block into the blocks it holds.
// Returns false with `problem` naming what is wrong (unknown codec or
// layout, a zstd error, sizes that do not add up). `blocks` and `scratch`
// (zstd's output, for the column layouts) may be buffers of an earlier
// call: reused, they cost no page faults, which were a sixth of a
// reader's time; new ones are not zero-filled and fault in 2 MiB pages
// (huge_pages.h).
bool unpack(std::span<const uint8_t> payload, ExpandedBytes& blocks, std::string& problem,
            ExpandedBytes* scratch = nullptr);

// The blocks a COMPRESSED block holds with PACKET blocks cut after their
// 48-byte header (layouts 1 and 2 store them so, at the frame's start), or
// all of them whole (layout 0): what a reader needs to know what the block
// holds without rebuilding any record.
struct BlockSection {
  std::vector<uint8_t> bytes;
  bool packets_cut = false;  // a PACKET block (of 48 bytes or more) is its header only
  uint32_t raw_size = 0;     // what the whole block expands to
};

// Fills `section` from the payload of a COMPRESSED block, decoding only the
// part of the frame it needs. False with `problem` set as for unpack.
bool unpack_block_section(std::span<const uint8_t> payload, BlockSection& section, std::string& problem);

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_PACKED_BLOCKS_H
