// ReferenceSplitter: the writer's side of the reference-columns layout
// (reference_columns.h, docs/FORMAT.md layout 2), built for speed: it runs
// on the recorder's packing threads at several hundred MB/s of trace.
//
// Two passes over the run. The first walks the blocks once: it copies the
// block section, writes each record's size and key and its time varint
// (into its key word's buffer), counts each key word's records and notes
// where each record starts (8 bytes per record). The second, knowing each
// group's count and which words are references, writes every body byte
// straight to its place in its byte plane and codes the reference words.
// Then the sections go to the caller's sink in the layout's order, from
// where they lie. Nothing is allocated per record: every buffer is kept
// from one run to the next.
#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include "column_layout.h"
#include "reference_columns.h"
#include "reference_model.h"
#include "scratch.h"
#include "spoor/format.h"
#include "time_steps.h"

namespace spoor::compress {
namespace {

namespace fmt = spoor::format;

constexpr size_t kBlockHeader = sizeof(fmt::BlockHeader);
constexpr size_t kPacketHeader = sizeof(fmt::PacketBlock);
constexpr uint32_t kRecordHeader = fmt::kRecordHeaderSize;
constexpr uint64_t kPointerFloor = 1ull << 32;
constexpr uint32_t kNoGroup = 0;  // group_of_key: 0 none, else index + 1

// A byte buffer written through a cursor: `reserve_more(n)` before writing
// up to n bytes, so the per-record writes are plain stores.
struct Bytes {
  Scratch<uint8_t> data;
  size_t used = 0;
  void clear() { used = 0; }
  uint8_t* reserve_more(size_t n) {
    data.ensure(used + n, used);
    return data.data() + used;
  }
  void put(const void* p, size_t n) {
    if (n == 0) return;  // the storage may not exist yet (null data())
    std::memcpy(reserve_more(n), p, n);
    used += n;
  }
};

// A record's time less the one before it in its stream, 48-bit times
// (docs/FORMAT.md layout 2: written as a zigzag LEB128).
inline int64_t time_difference(uint64_t time, uint64_t previous) {
  return static_cast<int64_t>(((time - previous) & fmt::kTimeMask48) << 16) >> 16;
}

// Whether word `w` of the body at `body` holds a time on the trace's clock
// within 2^32 ticks (about a second) of its record's own, compared in the
// 48 bits a record's time keeps. Both must be 2^32 or more there: a word
// of small numbers (a size, an ID shifted up by 32) is not taken for a
// time when the clock is young, and the second after each 2^48 ticks
// (every day or two) finds none.
bool is_time_near_record(const uint8_t* body, uint32_t w) {
  uint64_t key_time = 0;  // u16 key, u48 time
  std::memcpy(&key_time, body - kRecordHeader + 2, 8);
  uint64_t value = 0;
  std::memcpy(&value, body + 8 * w, 8);
  constexpr uint64_t kNear = 1ull << 32;
  const uint64_t time = key_time >> 16;
  const uint64_t low = value & fmt::kTimeMask48;
  if (time < kNear || low < kNear) return false;
  return (low > time ? low - time : time - low) < kNear;
}

uint32_t width_of(uint64_t v) {
  uint32_t bytes = 1;
  while (bytes < 8 && (v >> (8 * bytes)) != 0) ++bytes;
  return bytes;
}

// Writes `count` items of `width` bytes (`stride` apart in `items`) as
// byte planes.
template <typename T>
void put_planes(uint8_t* dst, const T* items, size_t count, uint32_t width) {
  for (uint32_t k = 0; k < width; ++k)
    for (size_t i = 0; i < count; ++i) *dst++ = static_cast<uint8_t>(items[i] >> (8 * k));
}

}  // namespace

struct ReferenceSplitter::State {
  // The records of one key word, in the run.
  struct Group {
    uint16_t key = 0;
    uint32_t count = 0;
    uint64_t total = 0;  // body bytes
    uint32_t width = 0;  // body size of the first record
    bool uniform = true;
    const uint8_t* first_body = nullptr;
    const uint8_t* last_body = nullptr;
    Bytes times;  // varints
    RunningStep step;  // layout 3: what the varints are divided by
    std::vector<uint32_t> stream_firsts;  // layout 3: indexes of streams' first records, not divided
    // Second pass.
    bool planar = false;
    uint8_t mask = 0;
    uint32_t first_column = 0;
    int class_word = -1;
    std::vector<uint16_t> plain_offsets;  // body offset of each plain byte (planar with references)
    uint64_t plain_at = 0;                // in `plain`
    uint32_t taken = 0;                   // records placed (planar)
    uint64_t filled = 0;                  // bytes placed (not planar)
    uint32_t plain_width() const { return width - 8 * static_cast<uint32_t>(__builtin_popcount(mask)); }
  };
  struct Column {
    size_t codes_at = 0;  // in `codes`
    uint32_t hits = 0, misses = 0;
    uint64_t largest = 0;
    size_t sources_at = 0, literals_at = 0;  // in `sources`, `literals`
  };
  struct Record {
    uint32_t offset;  // of the record in the run
    uint32_t group;
  };
  struct StreamTime {
    uint32_t stream;
    uint64_t time;
  };

  std::vector<uint32_t> group_of_key = std::vector<uint32_t>(65536, kNoGroup);
  std::vector<Group> groups;  // the first `used_groups` are this run's, by first appearance
  uint32_t used_groups = 0;
  std::vector<uint32_t> order;  // group indexes by key
  std::vector<StreamTime> stream_times;
  Bytes section, sizes;
  Scratch<Record> records;  // the first record_count are this run's
  size_t record_count = 0;
  Scratch<uint8_t> plain;
  std::vector<Column> columns;
  Scratch<uint32_t> codes;
  Scratch<uint8_t> sources;
  Scratch<uint64_t> literals;
  Scratch<uint8_t> planes;  // one column's codes or literals as byte planes, while written
  Scratch<uint8_t> multiplied;  // a group's time codes while its step narrows
  ReferenceModel model{ReferenceModel::Side::kWriter};
  bool time_steps = false;  // layouts 3 and 4
  bool wide_in_rows = false;  // layout 4

  Group& group_for(uint16_t key, uint32_t& index) {
    uint32_t& slot = group_of_key[key];
    if (slot == kNoGroup) {
      if (used_groups == groups.size()) groups.emplace_back();
      Group& g = groups[used_groups];
      g.key = key;
      g.count = 0;
      g.total = 0;
      g.width = 0;
      g.uniform = true;
      g.times.clear();
      g.step = RunningStep{};
      g.stream_firsts.clear();
      slot = ++used_groups;
    }
    index = slot - 1;
    return groups[index];
  }

  uint64_t& previous_time(uint32_t stream) {
    for (StreamTime& s : stream_times)
      if (s.stream == stream) return s.time;
    stream_times.push_back(StreamTime{stream, 0});
    return stream_times.back().time;
  }

  void forget_groups() {
    for (uint32_t i = 0; i < used_groups; ++i) group_of_key[groups[i].key] = kNoGroup;
    used_groups = 0;
  }

  bool first_pass(std::span<const uint8_t> blocks);
  int64_t divided_by_step(Group& g, int64_t difference);
  void multiply_times(Group& g, uint64_t factor);
  void plan();
  void second_pass(const uint8_t* base);
  size_t layout_bytes() const;
  bool write(const PieceSink& sink);
};

// Walks the blocks; false when one is cut short or a packet's records do
// not walk exactly to its end.
bool ReferenceSplitter::State::first_pass(std::span<const uint8_t> blocks) {
  const uint8_t* base = blocks.data();
  size_t offset = 0;
  while (offset < blocks.size()) {
    if (blocks.size() - offset < kBlockHeader) return false;
    const uint8_t* at = base + offset;
    fmt::BlockHeader h{};
    std::memcpy(&h, at, sizeof h);
    if (h.size > blocks.size() - offset - kBlockHeader) return false;
    const uint8_t* payload = at + kBlockHeader;
    if (h.type != fmt::kBlockPacket || h.size < kPacketHeader) {
      section.put(at, kBlockHeader + h.size);
      offset += kBlockHeader + h.size;
      continue;
    }
    fmt::PacketBlock packet{};
    std::memcpy(&packet, payload, sizeof packet);
    if (packet.data_size != h.size - kPacketHeader) return false;
    section.put(at, kBlockHeader + kPacketHeader);
    const size_t streams_before = stream_times.size();
    uint64_t& previous = previous_time(packet.stream_id);
    bool stream_first = stream_times.size() != streams_before;  // the stream's first record in the run
    const uint8_t* record = payload + kPacketHeader;
    const uint8_t* end = record + packet.data_size;
    // Every record takes at least 10 bytes: 4 of sizes, at most 10 of
    // time varint, 8 of `records`.
    uint8_t* size_at = sizes.reserve_more(packet.data_size / kRecordHeader * kSizeKeyBytes);
    const size_t most = record_count + packet.data_size / kRecordHeader;
    records.ensure(most, record_count);
    Record* next_record = records.data() + record_count;
    uint16_t last_key = 0;
    Group* g = nullptr;
    uint32_t group_index = 0;
    while (record < end) {
      if (end - record < static_cast<ptrdiff_t>(kRecordHeader)) return false;
      uint16_t size = 0;
      std::memcpy(&size, record, 2);
      // An odd first word is a short record (format 1.3, single-core writers):
      // the columns hold long records only, so the packer keeps this run as
      // blocks (layout 0).
      if (size < kRecordHeader || (size & 1) != 0 || size > end - record) return false;
      uint64_t key_time = 0;  // u16 key, u48 time
      std::memcpy(&key_time, record + 2, 8);
      const auto key = static_cast<uint16_t>(key_time);
      if (g == nullptr || key != last_key) {
        g = &group_for(key, group_index);
        last_key = key;
      }
      const uint64_t time = key_time >> 16;
      // A stream's first difference is its whole time: not divided.
      bool undivided = !time_steps;
      if (stream_first) {
        g->stream_firsts.push_back(g->count);
        stream_first = false;
        undivided = true;
      }
      const int64_t difference = time_difference(time, previous);
      const int64_t code = undivided ? difference : divided_by_step(*g, difference);
      g->times.used = static_cast<size_t>(put_varint(g->times.reserve_more(10), zigzag(code)) - g->times.data.data());
      previous = time;
      std::memcpy(size_at, record, kSizeKeyBytes);
      size_at += kSizeKeyBytes;
      const uint32_t body = size - kRecordHeader;
      if (g->count == 0) {
        g->width = body;
        g->first_body = record + kRecordHeader;
      }
      g->uniform = g->uniform && body == g->width;
      g->last_body = record + kRecordHeader;
      ++g->count;
      g->total += body;
      *next_record++ = Record{static_cast<uint32_t>(record - base), group_index};
      record += size;
    }
    sizes.used = static_cast<size_t>(size_at - sizes.data.data());
    record_count = static_cast<size_t>(next_record - records.data());
    offset += kBlockHeader + h.size;
  }
  return true;
}

// Layout 3: `difference` divided by its group's step, narrowed first when
// it does not divide `difference` (time_steps.h). Most records: a multiply
// and a compare to check, one multiply to divide.
inline int64_t ReferenceSplitter::State::divided_by_step(Group& g, int64_t difference) {
  uint64_t factor = 1;
  const int64_t quotient = g.step.divide(difference, factor);
  if (factor != 1) [[unlikely]] multiply_times(g, factor);
  return quotient;
}

// The group's codes so far, divided by a step `factor` times the new one,
// made codes divided by the new one. Out of line: a group's first few
// records come here, while its step settles, and the rest seldom do (each
// time at least halves the step: at most 47 passes over a group's codes).
__attribute__((noinline)) void ReferenceSplitter::State::multiply_times(Group& g, uint64_t factor) {
  multiplied.ensure(size_t{g.count} * 10);
  const size_t n = multiply_codes(g.times.data.data(), g.count, g.stream_firsts, factor, multiplied.data());
  g.times.clear();
  g.times.put(multiplied.data(), n);
}

// Chooses each group's reference words (those whose first value looks like
// an address: the choice only affects the size, the mask records it) and
// places its bytes in `plain` and its columns' codes.
void ReferenceSplitter::State::plan() {
  order.resize(used_groups);
  for (uint32_t i = 0; i < used_groups; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return groups[a].key < groups[b].key; });
  model.reset();
  columns.clear();
  // A word that holds, in the group's first and last records, a time
  // close to the record's own (an I/O call's start_ticks) is new in every
  // record: as a reference column each value would be a literal that also
  // grows the model's index and class lists, all cost and no gain. It
  // stays with the plain bytes. (Words that are not 8-byte aligned, as in
  // the tid-prefixed records, are not told apart.) A heap address that
  // happened to lie that close to the clock's count in both would be coded
  // as plain bytes for the run: larger, never wrong, as the mask says
  // which words are references.
  auto is_time_word = [](const Group& g, uint32_t w) {
    return is_time_near_record(g.first_body, w) && is_time_near_record(g.last_body, w);
  };
  uint64_t plain_bytes = 0;
  size_t code_count = 0;
  for (uint32_t i : order) {
    Group& g = groups[i];
    g.planar = planar_bodies(g.uniform, g.count, g.width, wide_in_rows);
    g.mask = 0;
    g.first_column = static_cast<uint32_t>(columns.size());
    g.class_word = -1;
    g.taken = 0;
    g.filled = 0;
    g.plain_at = plain_bytes;
    plain_bytes += g.total;  // what a group keeps besides its reference words is at most this
    if (!g.planar) continue;
    for (uint32_t w = 0; w < kWordsChecked && 8 * w + 8 <= g.width && columns.size() < kMaxColumns; ++w) {
      uint64_t value = 0;
      std::memcpy(&value, g.first_body + 8 * w, 8);
      if (value < kPointerFloor || is_time_word(g, w)) continue;
      g.mask = static_cast<uint8_t>(g.mask | 1u << w);
      Column& c = columns.emplace_back();
      c.codes_at = code_count;
      code_count += g.count;
      model.add_column(g.count);
    }
    if (g.mask == 0) continue;
    for (uint32_t w = 0; w < kWordsChecked && 8 * w + 8 <= g.width; ++w)
      if ((g.mask >> w & 1) == 0) {
        g.class_word = static_cast<int>(w);
        break;
      }
    g.plain_offsets.clear();
    for (uint32_t b = 0; b < g.width; ++b)
      if (!(b / 8 < kWordsChecked && (g.mask >> (b / 8) & 1) != 0)) g.plain_offsets.push_back(static_cast<uint16_t>(b));
  }
  plain.ensure(plain_bytes);
  codes.ensure(code_count);
  sources.ensure(code_count);
  literals.ensure(code_count);
  // Sources and literals of a column sit behind its codes' space: a column
  // holds at most count of each.
  for (Column& c : columns) c.sources_at = c.literals_at = c.codes_at;
}

void ReferenceSplitter::State::second_pass(const uint8_t* base) {
  uint8_t* const plain_base = plain.data();
  for (size_t i = 0; i < record_count; ++i) {
    const Record& r = records[i];
    Group& g = groups[r.group];
    const uint8_t* record = base + r.offset;
    const uint8_t* body = record + kRecordHeader;
    if (!g.planar) {
      uint16_t size = 0;
      std::memcpy(&size, record, 2);
      if (size == kRecordHeader) continue;  // no body (and maybe no plain storage)
      std::memcpy(plain_base + g.plain_at + g.filled, body, size - kRecordHeader);
      g.filled += size - kRecordHeader;
      continue;
    }
    const uint32_t index = g.taken++;
    uint8_t* dst = plain_base + g.plain_at + index;
    if (g.mask == 0) {
      for (uint32_t b = 0; b < g.width; ++b) dst[size_t{b} * g.count] = body[b];
      continue;
    }
    const uint16_t* offsets = g.plain_offsets.data();
    const size_t plain_width = g.plain_offsets.size();
    for (size_t j = 0; j < plain_width; ++j) dst[j * g.count] = body[offsets[j]];
    uint64_t cls = 0;
    if (g.class_word >= 0) {
      uint64_t size = 0;
      std::memcpy(&size, body + 8 * g.class_word, 8);
      cls = ReferenceModel::class_of(size);
    }
    uint32_t column = g.first_column;
    for (uint32_t m = g.mask; m != 0; m &= m - 1) {
      const auto w = static_cast<uint32_t>(std::countr_zero(m));
      Column& c = columns[column];
      uint64_t value = 0;
      std::memcpy(&value, body + 8 * w, 8);
      uint32_t source = 0;
      const uint64_t code = model.encode(value, column, index, cls, source);
      codes[c.codes_at + index] = static_cast<uint32_t>(code);
      if (code == 0) {
        literals[c.literals_at + c.misses++] = value;
      } else {
        sources[c.sources_at + c.hits++] = static_cast<uint8_t>(source);
        if (code > c.largest) c.largest = code;
      }
      ++column;
    }
  }
}

size_t ReferenceSplitter::State::layout_bytes() const {
  size_t total = section.used + sizes.used;
  for (uint32_t i : order) {
    const Group& g = groups[i];
    total += g.times.used;
    if (time_steps) {
      uint8_t step[10];
      total += static_cast<size_t>(put_varint(step, g.step.step()) - step);
    }
    if (!g.planar) {
      total += g.total;
      continue;
    }
    total += 1 + size_t{g.count} * g.plain_width();
    for (int k = 0; k < __builtin_popcount(g.mask); ++k) {
      const Column& c = columns[g.first_column + k];
      total += 1 + size_t{g.count} * width_of(c.largest) + c.hits + size_t{c.misses} * 8;
    }
  }
  return total;
}

// The sections in the layout's order, each from where it lies; only the
// byte planes of codes and literals are made here, one column at a time in
// `planes`.
bool ReferenceSplitter::State::write(const PieceSink& sink) {
  // An empty scratch buffer may have no storage yet (data() is null).
  auto put = [&](const void* p, size_t n) { return n == 0 || sink(static_cast<const uint8_t*>(p), n); };
  auto put_byte = [&](uint8_t b) { return put(&b, 1); };
  bool ok = put(section.data.data(), section.used) && put(sizes.data.data(), sizes.used);
  for (uint32_t i : order) {
    if (ok && time_steps) {
      uint8_t step[10];
      ok = put(step, static_cast<size_t>(put_varint(step, groups[i].step.step()) - step));
    }
    ok = ok && put(groups[i].times.data.data(), groups[i].times.used);
  }
  for (uint32_t i : order) {
    if (!ok) break;
    const Group& g = groups[i];
    if (!g.planar) {
      ok = put(plain.data() + g.plain_at, g.total);
      continue;
    }
    ok = put_byte(g.mask) && put(plain.data() + g.plain_at, size_t{g.count} * g.plain_width());
    for (int k = 0; ok && k < __builtin_popcount(g.mask); ++k) {
      const Column& c = columns[g.first_column + k];
      const uint32_t width = width_of(c.largest);
      planes.ensure(size_t{g.count} * 8);  // codes take at most 8 planes, literals (at most count) 8
      put_planes(planes.data(), codes.data() + c.codes_at, g.count, width);
      ok = put_byte(static_cast<uint8_t>(width)) && put(planes.data(), size_t{g.count} * width) &&
           put(sources.data() + c.sources_at, c.hits);
      if (!ok) break;
      put_planes(planes.data(), literals.data() + c.literals_at, c.misses, 8);
      ok = put(planes.data(), size_t{c.misses} * 8);
    }
  }
  return ok;
}

ReferenceSplitter::ReferenceSplitter() : state_(std::make_unique<State>()) {}
ReferenceSplitter::~ReferenceSplitter() = default;

bool ReferenceSplitter::split(std::span<const uint8_t> blocks, ColumnsInfo& info, bool time_steps,
                              bool wide_in_rows) {
  State& s = *state_;
  s.time_steps = time_steps;
  s.wide_in_rows = wide_in_rows;
  s.forget_groups();
  s.section.clear();
  s.sizes.clear();
  s.record_count = 0;
  s.stream_times.clear();
  // Sized once for the most records the run can hold: grown step by step,
  // each step copied the records so far into fresh pages (a third of a
  // packing thread's page faults on a first run).
  const size_t most_records = blocks.size() / kRecordHeader;
  s.records.ensure(most_records);
  s.sizes.data.ensure(most_records * kSizeKeyBytes);
  const bool walked = s.first_pass(blocks);
  const bool fits = walked && s.section.used <= UINT32_MAX && s.record_count <= UINT32_MAX;
  if (!fits) return false;  // the next split forgets its groups
  info.blocks_size = static_cast<uint32_t>(s.section.used);
  info.record_count = static_cast<uint32_t>(s.record_count);
  s.plan();
  s.second_pass(blocks.data());
  return true;
}

size_t ReferenceSplitter::bytes() const { return state_->layout_bytes(); }

bool ReferenceSplitter::write(const PieceSink& sink) { return state_->write(sink); }

}  // namespace spoor::compress
