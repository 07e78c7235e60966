// join_referenced: the reader's side of the reference-columns layout
// (reference_columns.h, docs/FORMAT.md layout 2); the writer's is
// reference_split.cpp.
#include "reference_columns.h"

#include <bit>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "column_layout.h"
#include "reference_model.h"
#include "spoor/format.h"
#include "time_steps.h"

namespace spoor::compress {
namespace {

namespace fmt = spoor::format;

constexpr size_t kRecordHeader = fmt::kRecordHeaderSize;
constexpr size_t kMaxVarint = 10;

// Reads one varint from [at, end). False when it runs past `end` or over
// 10 bytes.
bool get_varint(const uint8_t*& at, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (size_t i = 0; i < kMaxVarint && at < end; ++i) {
    const uint8_t b = *at++;
    v |= uint64_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// Steps over `count` varints; false if they do not all lie in [at, end).
bool skip_varints(const uint8_t*& at, const uint8_t* end, uint64_t count) {
  uint64_t v = 0;
  for (uint64_t i = 0; i < count; ++i)
    if (!get_varint(at, end, v)) return false;
  return true;
}

// A 48-bit time difference as a small unsigned number: sign-extended,
// divided by its group's step (layout 3; 1 in layout 2), then zigzag
// (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...).
uint64_t time_from_code(uint64_t code, uint64_t step, uint64_t previous) {
  return (previous + static_cast<uint64_t>(unzigzag(code)) * step) & fmt::kTimeMask48;
}

// Records whose plain bytes a planar group turns back into rows at once.
// Each of its planes gives a run of kTileRecords bytes (a cache line) per
// tile; byte by byte, record after record, every plane's line was touched
// at each record, and a body of ~40 plain bytes is ~40 streams at once.
constexpr uint32_t kTileRecords = 64;

// A run of a body's plain bytes (between its reference words).
struct PlainRun {
  uint32_t at = 0, size = 0;
};

// The records of one key word.
struct Group : BodyShape {
  uint8_t mask = 0;       // bit w: the word at body offset 8w is a reference column
  uint32_t first_column = 0;
  // section offsets in the packed bytes, and progress
  uint64_t times_at = 0;
  uint64_t time_step = 1;
  uint64_t base = 0;      // bodies (not planar) or plain planes (planar)
  uint64_t taken = 0;     // records rebuilt (planar) or body bytes taken (not planar)
  // Planar: the body's plain runs in order (plane p is the p-th plain
  // byte), and the rows of the current tile's records, plain bytes only.
  std::vector<PlainRun> runs;
  std::vector<uint8_t> tile;
  uint32_t plain = 0;  // plain_width(), kept: std::popcount is a libgcc call per record without -mpopcnt

  uint32_t plain_width() const { return width - 8 * static_cast<uint32_t>(std::popcount(mask)); }
  bool is_reference_byte(uint32_t b) const { return b / 8 < kWordsChecked && (mask >> (b / 8) & 1) != 0; }

  // Sets runs and the tile's room from mask and width.
  void plan_plain_runs() {
    for (uint32_t b = 0; b < width; ++b) {
      if (is_reference_byte(b)) continue;
      if (!runs.empty() && runs.back().at + runs.back().size == b) ++runs.back().size;
      else runs.push_back(PlainRun{b, 1});
    }
    plain = plain_width();
    // No more rows than records: the tile never outgrows the group's own
    // bytes, which the declared size bounds (a damaged or hostile block
    // cannot make it allocate more).
    tile.resize((count < kTileRecords ? count : kTileRecords) * plain);
  }

  // The plain bytes of record `index` (planes at `planes`) into `body`;
  // a tile's first record turns the tile's planes into rows.
  void copy_plain(const uint8_t* planes, uint64_t index, uint8_t* body) {
    const uint64_t in_tile = index % kTileRecords;
    if (in_tile == 0) {
      const uint64_t records = count - index < kTileRecords ? count - index : kTileRecords;
      for (uint32_t p = 0; p < plain; ++p) {
        const uint8_t* from = planes + p * count + index;
        for (uint64_t i = 0; i < records; ++i) tile[i * plain + p] = from[i];
      }
    }
    const uint8_t* row = tile.data() + in_tile * plain;
    for (const PlainRun& r : runs) {
      std::memcpy(body + r.at, row, r.size);
      row += r.size;
    }
  }
  // The word whose value gives the record its class (reference_model.h):
  // the first 8-byte word that is not a reference; -1 if none.
  int class_word() const {
    for (uint32_t w = 0; w < kWordsChecked && 8 * w + 8 <= width; ++w)
      if ((mask >> w & 1) == 0) return static_cast<int>(w);
    return -1;
  }
};

uint64_t record_class(const Group& g, const uint8_t* body) {
  const int w = g.class_word();
  if (w < 0 || g.mask == 0) return 0;
  uint64_t size = 0;
  std::memcpy(&size, body + 8 * w, 8);
  return ReferenceModel::class_of(size);
}

// One reference word of one group.
struct Column {
  uint32_t code_width = 0;
  uint64_t codes_at = 0, sources_at = 0, literals_at = 0, misses = 0;
  uint64_t hits_taken = 0, misses_taken = 0;
};

// The code of record `index` among `count`, stored `width` byte planes.
uint64_t planar_value(const uint8_t* planes, uint64_t count, uint32_t width, uint64_t index) {
  uint64_t v = 0;
  for (uint32_t k = 0; k < width; ++k) v |= uint64_t{planes[k * count + index]} << (8 * k);
  return v;
}

// The group of a key word: std::map's lookup behind a cache of the last
// two keys (heap traces alternate Alloc and Free), which saves a tree walk
// per record.
class GroupFinder {
 public:
  explicit GroupFinder(std::map<uint16_t, Group>& groups) : groups_(groups) {}
  Group& operator()(uint16_t key) {
    if (key_[0] == key && group_[0] != nullptr) return *group_[0];
    if (key_[1] == key && group_[1] != nullptr) {
      std::swap(key_[0], key_[1]);
      std::swap(group_[0], group_[1]);
      return *group_[0];
    }
    key_[1] = key_[0];
    group_[1] = group_[0];
    key_[0] = key;
    group_[0] = &groups_[key];
    return *group_[0];
  }

 private:
  std::map<uint16_t, Group>& groups_;
  uint16_t key_[2] = {0, 0};
  Group* group_[2] = {nullptr, nullptr};
};

}  // namespace

bool join_referenced(std::span<const uint8_t> packed, const ColumnsInfo& info, uint32_t raw_size,
                     bool time_steps, bool wide_in_rows, ExpandedBytes& out, std::string& problem) {
  // No clear(): rebuild_block_section sizes `out` and writes every byte of
  // it, so a reused buffer is neither zero-filled nor faulted in again.
  const uint64_t n = info.record_count;
  const uint64_t sizes_at = info.blocks_size;
  const uint64_t times_at = sizes_at + n * kSizeKeyBytes;
  const uint8_t* data = packed.data();
  const uint8_t* data_end = data + packed.size();
  if (times_at > packed.size()) {
    problem = "its block section and the sizes of " + std::to_string(n) + " records need " +
              std::to_string(times_at) + " bytes but it expands to " + std::to_string(packed.size());
    return false;
  }
  const uint8_t* sizes = data + sizes_at;

  std::map<uint16_t, Group> groups;
  GroupFinder group_of(groups);
  uint64_t record_bytes = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t size = 0, key = 0;
    std::memcpy(&size, sizes + i * kSizeKeyBytes, 2);
    std::memcpy(&key, sizes + i * kSizeKeyBytes + 2, 2);
    if (size < kRecordHeader || (size & 1) != 0) {
      problem = "record " + std::to_string(i) + " has the invalid size " + std::to_string(size);
      return false;
    }
    group_of(key).note(size - kRecordHeader);
    record_bytes += size;
  }
  // Bounds what the reference columns below allocate by the declared size.
  if (record_bytes > raw_size) {
    problem = "its " + std::to_string(n) + " records take " + std::to_string(record_bytes) +
              " bytes, more than the " + std::to_string(raw_size) + " it expands to";
    return false;
  }

  for (auto& [key, g] : groups) g.wide_in_rows = wide_in_rows;
  // Find every section: each group's times, then each group's bodies.
  const uint8_t* cursor = data + times_at;
  for (auto& [key, g] : groups) {
    if (time_steps && (!get_varint(cursor, data_end, g.time_step) || g.time_step == 0 ||
                       g.time_step > fmt::kTimeMask48)) {
      problem = "the time step of the records of key word " + std::to_string(key) + " is damaged";
      return false;
    }
    g.times_at = static_cast<uint64_t>(cursor - data);
    if (!skip_varints(cursor, data_end, g.count)) {
      problem = "the times of the records of key word " + std::to_string(key) + " run past its end";
      return false;
    }
  }
  std::vector<Column> columns;
  ReferenceModel model(ReferenceModel::Side::kReader);
  auto past_end = [&](uint64_t bytes) { return bytes > static_cast<uint64_t>(data_end - cursor); };
  for (auto& [key, g] : groups) {
    const std::string group_name = "the bodies of key word " + std::to_string(key);
    if (!g.planar()) {
      if (past_end(g.total)) {
        problem = group_name + " run past its end";
        return false;
      }
      g.base = static_cast<uint64_t>(cursor - data);
      cursor += g.total;
      continue;
    }
    if (past_end(1)) {
      problem = group_name + " run past its end";
      return false;
    }
    g.mask = *cursor++;
    for (uint32_t w = 0; w < kWordsChecked; ++w) {
      if ((g.mask >> w & 1) != 0 && 8 * w + 8 > g.width) {
        problem = group_name + " name a reference word past their " + std::to_string(g.width) + " bytes";
        return false;
      }
    }
    if (past_end(g.count * g.plain_width())) {
      problem = group_name + " run past its end";
      return false;
    }
    g.base = static_cast<uint64_t>(cursor - data);
    cursor += g.count * g.plain_width();
    g.plan_plain_runs();
    g.first_column = static_cast<uint32_t>(columns.size());
    for (int i = 0; i < std::popcount(g.mask); ++i) {
      if (columns.size() == kMaxColumns) {
        problem = "it has more than " + std::to_string(kMaxColumns) + " reference columns";
        return false;
      }
      Column& c = columns.emplace_back();
      model.add_column(static_cast<uint32_t>(g.count));
      if (past_end(1) || (c.code_width = *cursor++) == 0 || c.code_width > 8 ||
          past_end(g.count * c.code_width)) {
        problem = "the references of " + group_name + " run past its end";
        return false;
      }
      c.codes_at = static_cast<uint64_t>(cursor - data);
      for (uint64_t j = 0; j < g.count; ++j)
        if (planar_value(cursor, g.count, c.code_width, j) == 0) ++c.misses;
      cursor += g.count * c.code_width;
      if (past_end(g.count - c.misses + c.misses * 8)) {
        problem = "the references of " + group_name + " run past its end";
        return false;
      }
      c.sources_at = static_cast<uint64_t>(cursor - data);
      c.literals_at = c.sources_at + (g.count - c.misses);
      cursor += g.count - c.misses + c.misses * 8;
    }
  }
  if (cursor != data_end) {
    problem = "its columns end " + std::to_string(data_end - cursor) + " bytes before its end";
    return false;
  }

  std::map<uint32_t, uint64_t> previous_times;
  uint64_t* previous_time = nullptr;  // of the current packet's stream
  bool stream_first = false;          // the next record is its stream's first in the frame (never divided)
  return rebuild_block_section(
      data, info.blocks_size, sizes, n, raw_size, out, problem,
      [&](const fmt::PacketBlock& header) {
        const auto [at, fresh] = previous_times.try_emplace(header.stream_id, 0);
        previous_time = &at->second;
        stream_first = fresh;
      },
      [&](uint64_t next, uint16_t size, uint16_t key, uint8_t* at) {
        Group& g = group_of(key);
        // The group's times were checked to be g.count varints in place.
        const uint8_t* time_at = data + g.times_at;
        uint64_t time_code_read = 0;
        get_varint(time_at, data_end, time_code_read);
        g.times_at = static_cast<uint64_t>(time_at - data);
        *previous_time = time_from_code(time_code_read, stream_first ? 1 : g.time_step, *previous_time);
        stream_first = false;
        std::memcpy(at, sizes + next * kSizeKeyBytes, kSizeKeyBytes);
        std::memcpy(at + kSizeKeyBytes, previous_time, kTimeBytes);
        uint8_t* const body = at + kRecordHeader;

        const uint32_t width = size - kRecordHeader;
        if (!g.planar()) {
          std::memcpy(body, data + g.base + g.taken, width);
          g.taken += width;
        } else {
          const uint64_t index = g.taken++;
          g.copy_plain(data + g.base, index, body);
          const uint64_t cls = record_class(g, body);
          uint32_t column = g.first_column;
          for (uint32_t w = 0; w < kWordsChecked; ++w) {
            if ((g.mask >> w & 1) == 0) continue;
            Column& c = columns[column];
            const uint64_t code = planar_value(data + c.codes_at, g.count, c.code_width, index);
            const auto position = static_cast<uint32_t>(index);
            uint64_t value = 0;
            if (code == 0) {
              value = planar_value(data + c.literals_at, c.misses, 8, c.misses_taken++);
              model.literal(value, column, position, cls);
            } else {
              const uint8_t source = data[c.sources_at + c.hits_taken++];
              if (!model.decode(code, source, column, position, cls, value)) {
                problem = "record " + std::to_string(next) + " refers with code " + std::to_string(code) +
                          " to column " + std::to_string(source) + ", which holds no such live value";
                return false;
              }
            }
            std::memcpy(body + 8 * w, &value, 8);
            ++column;
          }
        }
        return true;
      });
}

}  // namespace spoor::compress
