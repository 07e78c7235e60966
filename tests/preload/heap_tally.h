// A Spoor trace's heap events (provider Spoor.Heap) summed the way heap
// profilers report them: allocation calls per size, and the blocks still
// allocated at the end (leaks), found by pairing Alloc, Realloc and Free
// by address in time order.
#ifndef SPOOR_TESTS_HEAP_TALLY_H
#define SPOOR_TESTS_HEAP_TALLY_H

#include <cstdint>
#include <map>
#include <string>

namespace spoor::test {

// size -> how many blocks of that size
using SizeCounts = std::map<uint64_t, uint64_t>;

struct HeapTally {
  std::string error;                 // why the trace could not be read, or ""
  bool damaged = false;              // the reader recovered from damage
  SizeCounts allocations;            // Alloc, and Realloc that returned a block
  std::map<uint64_t, uint64_t> live; // address -> size of blocks never freed
};

HeapTally tally_heap(const std::string& trace_path);

// The sizes in [low, high) of `counts`.
SizeCounts in_band(const SizeCounts& counts, uint64_t low, uint64_t high);

// The live blocks as sizes.
SizeCounts sizes_of(const std::map<uint64_t, uint64_t>& live);

uint64_t total_blocks(const SizeCounts& counts);
uint64_t total_bytes(const SizeCounts& counts);

}  // namespace spoor::test

#endif  // SPOOR_TESTS_HEAP_TALLY_H
