// The geometry of the shim's growing hash tables (the stack table, the
// unwind rule cache): levels of 4x the slots of the one before, laid end to
// end in one mapping reserved up front, so that a short process touches the
// pages of a small first level instead of one page per entry of a large
// table, and growing never maps, allocates or locks.
#ifndef SPOOR_PRELOAD_TABLE_LEVELS_H
#define SPOOR_PRELOAD_TABLE_LEVELS_H

#include <cstdint>

namespace spoor::preload {

// kFirstBits: log2 of the first level's slots; kCount: levels, the last one
// holding 2^(kFirstBits + 2 * (kCount - 1)) slots.
template <int kFirstBits, int kCount>
struct TableLevels {
  static_assert(kCount >= 1 && kCount <= 8 && kFirstBits >= 8 && kFirstBits + 2 * (kCount - 1) <= 30);
  static constexpr int kLevels = kCount;
  static constexpr int bits(int level) { return kFirstBits + 2 * level; }
  static constexpr uint64_t slots(int level) { return uint64_t{1} << bits(level); }
  // Slots before `level`'s first: a multiple of 256, so with slots of 16
  // bytes each level starts on a page of its own.
  static constexpr uint64_t first_slot(int level) {
    uint64_t n = 0;
    for (int l = 0; l < level; ++l) n += slots(l);
    return n;
  }
  static constexpr uint64_t total_slots() { return first_slot(kCount); }

  // The newest level as one word, its first slot's address | its number
  // (slot arrays are 16-byte aligned at least, so the low 4 bits are free):
  // a reader gets both with one load, never one level's base with
  // another's size.
  static uintptr_t pack(const void* level_base, int level) {
    return reinterpret_cast<uintptr_t>(level_base) | static_cast<uintptr_t>(level);
  }
  static constexpr int level_of(uintptr_t packed) { return static_cast<int>(packed & 0xF); }
  template <typename Slot>
  static Slot* base_of(uintptr_t packed) {
    return reinterpret_cast<Slot*>(packed & ~uintptr_t{0xF});
  }
};

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_TABLE_LEVELS_H
