// ReferenceModel: how the reference columns (reference_columns.h) name a
// value seen before in the run. Both sides run the same model over the
// same sequence of values, so the reader ends up where the writer was.
//
// Every value seen has one live entry: its last occurrence (a column and a
// position in it). A repeated value is coded as:
//
//   - when the record has a class (the first plain 8-byte word of its body,
//     read as a heap size: (size + 23) / 16, glibc's chunk size step) and
//     the entry has the same class: 2k - 1, k being the entry's rank among
//     the live entries of its column and class, newest first (k <= 64
//     within the last 256 of them). A malloc() given back the chunk freed
//     last of its size class codes as 1;
//   - otherwise its rank g among all live entries of its column, newest
//     first (live_ranks.h): 2g when the record has a class, g when not.
//
// The entry's column is written beside the code. A new value is code 0 and
// a literal. An entry of a record without class (a free()) takes its class
// from the entry it replaces, so the chunk a free() returns keeps the size
// class of the malloc() that got it.
//
// Cost per value: a hash lookup (writer; its slot also names the entry's
// class list), a short count from the newest entry (live_ranks.h) or a
// scan of a few list entries, and the list's upkeep: about 40 ns on heap
// traces, most of the packing time (bench/RESULTS.md). The writer keeps
// no copy of the values by position (its index has them): the reader's
// arrays, 12 bytes per position, are neither filled nor allocated there.
#ifndef SPOOR_COMPRESS_REFERENCE_MODEL_H
#define SPOOR_COMPRESS_REFERENCE_MODEL_H

#include <algorithm>
#include <bit>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "live_ranks.h"
#include "spoor/format.h"

namespace spoor::compress {

class ReferenceModel {
 public:
  // The writer calls encode(), the reader literal() and decode().
  enum class Side { kWriter, kReader };
  explicit ReferenceModel(Side side) : reader_(side == Side::kReader) {}

  static constexpr uint32_t kMaxClassRank = 32;
  static constexpr uint32_t kMaxClassScan = 128;

  // The class of a record whose first plain word is `size`: glibc's chunk
  // size over 16 (at least 32 bytes: class 2). Never 0.
  static uint64_t class_of(uint64_t size) {
    const uint64_t cls = (size + 23) >> 4;
    return cls < 2 ? 2 : cls;
  }

  // Forgets every column and value, keeping the memory for the next run
  // (a run's arrays are megabytes: allocating them afresh costs page faults).
  void reset() {
    columns_used_ = 0;
    lists_used_ = 0;
    large_lists_.clear();
    if (index_used_ != 0) std::fill(index_.begin(), index_.end(), Slot{0, kEmptyPlace, kNoList});
    index_used_ = 0;
  }

  // Adds a column of `positions` entries; returns its number.
  uint32_t add_column(uint32_t positions) {
    if (columns_used_ == columns_.size()) columns_.emplace_back();
    Column& c = columns_[columns_used_];
    c.ranks.reset(positions);
    // values and lists are read only at live positions, which enter() wrote.
    if (reader_ && c.values.size() < positions) c.values.resize(positions);
    if (reader_ && c.lists.size() < positions) c.lists.resize(positions);
    if (!c.small_lists.empty()) std::fill(c.small_lists.begin(), c.small_lists.end(), kNoList);
    return columns_used_++;
  }
  size_t columns() const { return columns_used_; }

  // Writer: the code of `value` at `column`/`position` (0: a new value)
  // and, for a code other than 0, the column of the entry it names.
  // `record_class` is 0 for a record without class.
  uint64_t encode(uint64_t value, uint32_t column, uint32_t position, uint64_t record_class, uint32_t& source) {
    if (2 * (index_used_ + 1) > index_.size()) grow_index();
    Slot& slot = find_slot(value);
    if (slot.place == kEmptyPlace) {
      ++index_used_;
      slot.place = pack_place(column, position);
      slot.list = enter_entry(column, position, record_class);
      return 0;
    }
    // The slot holds the entry's list too: no lookup by position.
    const Place found{slot.place >> kPositionBits, slot.place & kPositionMask};
    const uint32_t found_list = slot.list;
    const uint64_t found_class = found_list == kNoList ? 0 : lists_[found_list].cls;
    uint64_t code = 0;
    if (record_class != 0 && found_class == record_class) {
      const uint32_t k = class_rank(found, lists_[found_list]);
      if (k != 0) code = 2 * uint64_t{k} - 1;
    }
    if (code == 0) {
      const uint64_t g = columns_[found.column].ranks.rank_of(found.position);
      code = record_class != 0 ? 2 * g : g;
    }
    source = found.column;
    retire(found, found_list);
    slot.place = pack_place(column, position);
    slot.list = enter_entry(column, position, record_class != 0 ? record_class : found_class);
    return code;
  }


  // Reader: a new value (code 0).
  void literal(uint64_t value, uint32_t column, uint32_t position, uint64_t record_class) {
    enter(value, column, position, record_class);
  }

  // Reader: the value a code other than 0 names in column `source`.
  // Returns false when it names no live entry (damage).
  bool decode(uint64_t code, uint32_t source, uint32_t column, uint32_t position, uint64_t record_class,
              uint64_t& value) {
    if (source >= columns_used_) return false;
    Place found{};
    if (record_class != 0 && (code & 1) != 0) {
      if (code > 2 * kMaxClassRank - 1 ||
          !class_entry(lists_[list_id(source, record_class)], static_cast<uint32_t>((code + 1) / 2), found))
        return false;
    } else {
      const uint64_t g = record_class != 0 ? code / 2 : code;
      const LiveRanks& ranks = columns_[source].ranks;
      if (g == 0 || g > ranks.live()) return false;
      found = Place{source, ranks.position_of(static_cast<uint32_t>(g))};
    }
    const Column& c = columns_[found.column];
    value = c.values[found.position];
    const uint32_t found_list = c.lists[found.position];
    const uint64_t found_class = found_list == kNoList ? 0 : lists_[found_list].cls;
    retire(found, found_list);
    enter(value, column, position, record_class != 0 ? record_class : found_class);
    return true;
  }

 private:
  static constexpr uint32_t kNoList = UINT32_MAX;
  // The index packs a place in 32 bits: a run holds at most 64 MiB / 10
  // bytes of records, under 2^24 positions per column, and columns are
  // fewer than 256 (column 255 with the last position is never used).
  static constexpr uint32_t kPositionBits = 24;
  static constexpr uint32_t kPositionMask = (1u << kPositionBits) - 1;
  static constexpr uint32_t kEmptyPlace = UINT32_MAX;  // an unused slot of the index
  static_assert(format::kMaxCompressedRaw / format::kRecordHeaderSize < kPositionMask);
  static uint32_t pack_place(uint32_t column, uint32_t position) { return column << kPositionBits | position; }
  static constexpr uint64_t kSmallClasses = 4096;

  struct Place {
    uint32_t column;
    uint32_t position;
  };
  struct Column {
    LiveRanks ranks;
    std::vector<uint64_t> values;
    std::vector<uint32_t> lists;  // each entry's class list, kNoList for none
    std::vector<uint32_t> small_lists = {};  // class -> list, for classes under kSmallClasses
  };
  // The entries of one column and class, oldest first; dead ones are
  // dropped from the back at once and from the middle now and then.
  struct ClassList {
    uint64_t cls = 0;
    uint32_t column = 0;
    std::vector<uint32_t> positions;
    uint32_t live = 0;
  };
  struct Slot {
    uint64_t value;
    uint32_t place;  // pack_place()
    uint32_t list;   // the entry's class list, kNoList for none
  };

  // The steps of encode() below are forced inline: called apart (as g++
  // -O2 left them), they cost about 55 more instructions per value in calls
  // and spills, and some branch misses (cachegrind, bench/RESULTS.md).
  //
  // The list of `column` and `cls`, made if new. Small classes (blocks
  // under 64 KiB) are looked up in the column's table, the rest hashed.
  [[gnu::always_inline]] uint32_t list_id(uint32_t column, uint64_t cls) {
    std::vector<uint32_t>& small = columns_[column].small_lists;
    if (cls < kSmallClasses) {
      if (small.empty()) small.assign(kSmallClasses, kNoList);
      if (small[cls] == kNoList) small[cls] = new_list(column, cls);
      return small[cls];
    }
    // Columns are fewer than 256.
    auto [it, fresh] = large_lists_.try_emplace(cls << 8 | column, lists_used_);
    if (fresh) new_list(column, cls);
    return it->second;
  }
  uint32_t new_list(uint32_t column, uint64_t cls) {
    if (lists_used_ == lists_.size()) lists_.emplace_back();
    ClassList& list = lists_[lists_used_];
    list.cls = cls;
    list.column = column;
    list.positions.clear();
    list.live = 0;
    return lists_used_++;
  }

  // The rank of `target` in its list, newest first; 0 beyond the limits.
  [[gnu::always_inline]] uint32_t class_rank(Place target, const ClassList& list) const {
    const LiveRanks& ranks = columns_[target.column].ranks;
    const std::vector<uint32_t>& e = list.positions;
    // A list's newest entry is always live (dead ones leave its end at
    // once), and is the one a malloc() gets back most often: no scan.
    if (!e.empty() && e.back() == target.position) return 1;
    uint32_t k = 0;
    for (size_t i = e.size(), scanned = 0; i > 0 && scanned < kMaxClassScan && k < kMaxClassRank; --i, ++scanned) {
      if (!ranks.alive(e[i - 1])) continue;
      ++k;
      if (e[i - 1] == target.position) return k;
    }
    return 0;
  }

  // The entry of rank k in `list`, within the same limits as class_rank.
  bool class_entry(const ClassList& list, uint32_t k, Place& found) const {
    if (k == 0) return false;
    const LiveRanks& ranks = columns_[list.column].ranks;
    const std::vector<uint32_t>& e = list.positions;
    uint32_t seen = 0;
    for (size_t i = e.size(), scanned = 0; i > 0 && scanned < kMaxClassScan; --i, ++scanned) {
      if (!ranks.alive(e[i - 1])) continue;
      if (++seen == k) {
        found = Place{list.column, e[i - 1]};
        return true;
      }
    }
    return false;
  }

  // Makes `position` of `column` a live entry of class `cls` (0: none);
  // returns its list.
  [[gnu::always_inline]] uint32_t enter_entry(uint32_t column, uint32_t position, uint64_t cls) {
    columns_[column].ranks.add(position);
    if (cls == 0) return kNoList;
    const uint32_t id = list_id(column, cls);
    ClassList& list = lists_[id];
    list.positions.push_back(position);
    ++list.live;
    return id;
  }
  // The reader's enter_entry(), which also notes the entry's value and list
  // by position (the writer finds both in its index).
  void enter(uint64_t value, uint32_t column, uint32_t position, uint64_t cls) {
    Column& c = columns_[column];
    c.values[position] = value;
    c.lists[position] = enter_entry(column, position, cls);
  }

  // `id`: the entry's list.
  [[gnu::always_inline]] void retire(Place p, uint32_t id) {
    Column& c = columns_[p.column];
    c.ranks.remove(p.position);
    if (id == kNoList) return;
    ClassList& list = lists_[id];
    --list.live;
    while (!list.positions.empty() && !c.ranks.alive(list.positions.back())) list.positions.pop_back();
    if (list.positions.size() > 2 * size_t{list.live} + 64) {
      size_t kept = 0;
      for (const uint32_t q : list.positions)
        if (c.ranks.alive(q)) list.positions[kept++] = q;
      list.positions.resize(kept);
    }
  }

  // The writer's index from each value to its live entry: open addressing,
  // never more than half full, grown by doubling (a value is never removed).
  // Sized by the values met, not by the positions: a heap trace reuses a
  // few thousand addresses, and a table that fits the cache is what keeps
  // this lookup cheap.
  void grow_index() {
    std::vector<Slot> old = std::move(index_);
    const size_t capacity = old.empty() ? 4096 : 2 * old.size();
    index_.assign(capacity, Slot{0, kEmptyPlace, kNoList});
    index_bits_ = static_cast<uint32_t>(std::countr_zero(capacity));
    for (const Slot& s : old)
      if (s.place != kEmptyPlace) find_slot(s.value) = s;
  }
  size_t hash_slot(uint64_t value) const {
    return static_cast<size_t>((value * 0x9E3779B97F4A7C15ull) >> (64 - index_bits_));
  }
  Slot& find_slot(uint64_t value) {
    const size_t mask = index_.size() - 1;
    size_t i = hash_slot(value);
    while (index_[i].place != kEmptyPlace && index_[i].value != value) i = (i + 1) & mask;
    index_[i].value = value;
    return index_[i];
  }

  std::vector<Column> columns_;  // the first columns_used_ are this run's
  uint32_t columns_used_ = 0;
  std::vector<ClassList> lists_;  // the first lists_used_ are this run's
  uint32_t lists_used_ = 0;
  std::unordered_map<uint64_t, uint32_t> large_lists_;
  bool reader_ = false;
  std::vector<Slot> index_;  // writer only
  size_t index_used_ = 0;
  uint32_t index_bits_ = 0;
};

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_REFERENCE_MODEL_H
