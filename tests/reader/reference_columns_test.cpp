// The reference-columns layouts (COMPRESSED layouts 2, 3 and 4): heap-like records,
// whose pointers come back as references to earlier values, expand to
// exactly what was packed, whatever the values (repeats within a record,
// across columns, values never seen, more pointer columns than can be
// named); and a frame whose columns were damaged or cut is refused with a
// reason, never read past its end.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "sample_trace.h"
#include "spoor/compress/packed_blocks.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

constexpr uint16_t kAlloc = 11;    // ptr, size, stack
constexpr uint16_t kFree = 12;     // ptr
constexpr uint16_t kRealloc = 13;  // old_ptr, ptr, size, stack

Bytes blocks_of(const TraceBuilder& t) { return Bytes(t.bytes().begin() + sizeof(fmt::FileHeader), t.bytes().end()); }

fmt::CompressedBlock header_of(const Bytes& payload) {
  fmt::CompressedBlock h{};
  std::memcpy(&h, payload.data(), sizeof h);
  return h;
}

Bytes pack(const Bytes& blocks, uint16_t layout) {
  compress::Packer packer(3, layout);
  Bytes payload;
  std::string problem;
  EXPECT_TRUE(packer.pack(blocks, payload, &problem)) << problem;
  EXPECT_EQ(header_of(payload).layout, layout);
  return payload;
}

Bytes unpack_ok(const Bytes& payload) {
  compress::ExpandedBytes back;
  std::string problem;
  EXPECT_TRUE(compress::unpack(payload, back, problem)) << problem;
  return Bytes(back.begin(), back.end());
}

// The uncompressed columns of a layout-2 or layout-3 payload, and the payload rebuilt
// around changed columns.
Bytes columns_of(const Bytes& payload) {
  const fmt::CompressedBlock h = header_of(payload);
  Bytes packed(h.packed_size);
  const size_t n = ZSTD_decompress(packed.data(), packed.size(), payload.data() + sizeof h, payload.size() - sizeof h);
  EXPECT_EQ(n, packed.size());
  return packed;
}
Bytes with_columns(const Bytes& payload, const Bytes& packed) {
  fmt::CompressedBlock h = header_of(payload);
  h.packed_size = static_cast<uint32_t>(packed.size());
  Bytes out(sizeof h + ZSTD_compressBound(packed.size()));
  const size_t n = ZSTD_compress(out.data() + sizeof h, out.size() - sizeof h, packed.data(), packed.size(), 1);
  out.resize(sizeof h + n);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

// A small allocator's trace: chunks come back LIFO per 16-byte size class
// (as from glibc's tcache), sometimes from fresh memory; some frees name
// pointers never allocated in the trace, some are repeated, some reallocs
// stay in place. Several streams, thread changes, times that jump. With a
// `tick_step` the clock moves in multiples of it from an offset that is
// none (as a virtual machine's TSC may).
Bytes heap_trace(uint32_t seed, int packets, int records_per_packet, uint64_t tick_step = 1) {
  std::mt19937_64 rng(seed);
  TraceBuilder t;
  add_sample_metadata(t);
  std::map<uint64_t, std::vector<uint64_t>> free_chunks;  // class -> addresses
  std::vector<std::pair<uint64_t, uint64_t>> live;        // address, size
  uint64_t top = 0x55d0'0000'0000ull;
  std::map<uint32_t, uint64_t> ticks;
  auto allocate = [&](uint64_t size) {
    std::vector<uint64_t>& bin = free_chunks[(size + 23) / 16];
    uint64_t p = 0;
    if (!bin.empty() && rng() % 8 != 0) {
      p = bin.back();
      bin.pop_back();
    } else {
      p = top;
      top += (size + 23) & ~15ull;
    }
    live.emplace_back(p, size);
    return p;
  };
  for (int p = 0; p < packets; ++p) {
    const uint32_t stream = 1 + static_cast<uint32_t>(rng() % 3);
    PacketBuilder packet(stream, stream - 1, static_cast<uint64_t>(p));
    uint64_t& now = ticks.try_emplace(stream, tick_step > 1 ? 19 + stream : 0).first->second;
    for (int r = 0; r < records_per_packet; ++r) {
      now += tick_step * (rng() % 16 == 0 ? rng() % (1ull << 40) : 50 + rng() % 400);
      const uint64_t what = rng() % 10;
      RecordBuilder rec(kAlloc, now);
      if (what < 4 || live.empty()) {
        const uint64_t size = rng() % 4 == 0 ? rng() % 70000 : 16 + rng() % 200;
        rec = RecordBuilder(kAlloc, now);
        rec.pointer(allocate(size)).u64(size).u32(static_cast<uint32_t>(rng() % 7));
      } else if (what < 8) {
        const size_t i = rng() % live.size();
        const auto [address, size] = live[i];
        live[i] = live.back();
        live.pop_back();
        free_chunks[(size + 23) / 16].push_back(address);
        rec = RecordBuilder(kFree, now);
        rec.pointer(address);
      } else if (what == 8) {
        // A free of something the trace never saw, or of nullptr, or twice.
        rec = RecordBuilder(kFree, now);
        const uint64_t kind = rng() % 3;
        rec.pointer(kind == 0 ? rng() : kind == 1 ? 0 : (live.empty() ? 0 : live[rng() % live.size()].first));
      } else {
        const size_t i = rng() % live.size();
        const uint64_t old = live[i].first;
        const uint64_t size = 16 + rng() % 3000;
        const bool in_place = rng() % 2 == 0;
        uint64_t now_at = old;
        if (!in_place) {
          live[i] = live.back();
          live.pop_back();
          now_at = allocate(size);
        } else {
          live[i].second = size;
        }
        rec = RecordBuilder(kRealloc, now);
        rec.pointer(old).pointer(now_at).u64(size).u32(static_cast<uint32_t>(rng() % 7));
      }
      if (r == 0 || rng() % 50 == 0) rec.tid(static_cast<uint32_t>(1000 + rng() % 4));
      packet.add(rec);
    }
    t.packet(packet);
  }
  t.stream_end(1, 0, 0, 1);
  return blocks_of(t);
}

// Kernel samples' stack copies: bodies of one size, 1 KiB each, the same
// words at an offset that moves (the sampled stack pointer does) and a few
// that differ. Layout 4 keeps them in rows, where zstd finds each copy in
// the one before; layout 3's byte planes scatter them. Narrow bodies pack
// to the same columns in both.
TEST(ReferenceColumns, Layout4KeepsWideBodiesInRows) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> pattern(256);
  for (uint64_t& w : pattern) w = rng();
  TraceBuilder t;
  add_sample_metadata(t);
  uint64_t now = 0;
  constexpr uint16_t kStackCopy = 14;
  for (uint64_t p = 0; p < 20; ++p) {
    PacketBuilder packet(1, 0, p);
    for (int r = 0; r < 50; ++r) {
      RecordBuilder rec(kStackCopy, now += 1000 + rng() % 50);
      const size_t shift = rng() % 4;
      for (size_t w = 0; w < 128; ++w) rec.u64(w < 2 ? rng() : pattern[w + shift]);
      packet.add(rec);
    }
    t.packet(packet);
  }
  const Bytes blocks = blocks_of(t);
  const Bytes planes = pack(blocks, fmt::kLayoutStepTimes);
  const Bytes rows = pack(blocks, fmt::kLayoutWideRows);
  EXPECT_EQ(unpack_ok(rows), blocks);
  EXPECT_EQ(unpack_ok(planes), blocks);
  EXPECT_LT(rows.size() * 3, planes.size()) << "rows " << rows.size() << ", planes " << planes.size();
  const Bytes heap = heap_trace(3, 40, 200);
  EXPECT_EQ(columns_of(pack(heap, fmt::kLayoutWideRows)), columns_of(pack(heap, fmt::kLayoutStepTimes)));
  EXPECT_EQ(unpack_ok(pack(heap, fmt::kLayoutWideRows)), heap);
}

TEST(ReferenceColumns, HeapRecordsRoundTrip) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const Bytes blocks = heap_trace(seed, 40, 200);
    EXPECT_EQ(unpack_ok(pack(blocks, fmt::kLayoutReferenceColumns)), blocks) << "seed " << seed;
  }
}

// Layout 3 divides each key word's time differences by their step: with a
// clock that moves in steps of 21 ticks it packs smaller than layout 2 and
// expands to the same blocks; with one that moves by single ticks its
// columns are layout 2's plus a step of 1 for each of the six key words
// (Alloc, Free and Realloc, each with and without a thread id).
TEST(ReferenceColumns, SteppedTimesRoundTripAndPackSmallerWhenTheClockSteps) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Bytes stepped = heap_trace(seed, 40, 200, 21);
    const Bytes payload = pack(stepped, fmt::kLayoutStepTimes);
    EXPECT_EQ(unpack_ok(payload), stepped);
    EXPECT_LT(payload.size(), pack(stepped, fmt::kLayoutReferenceColumns).size());

    const Bytes single = heap_trace(seed, 40, 200);
    const Bytes single_payload = pack(single, fmt::kLayoutStepTimes);
    EXPECT_EQ(unpack_ok(single_payload), single);
    EXPECT_EQ(columns_of(single_payload).size(), columns_of(pack(single, fmt::kLayoutReferenceColumns)).size() + 6);
  }
}

// The times section of layout 3, byte for byte (docs/FORMAT.md): for each
// key word, its step, then each difference divided by it, but for each
// stream's first record. The first record of a packet carries a thread id,
// so its key word (0x200C) is a group of its own: the streams' first
// records (124, and 5, which no step above 1 divides: were it divided, the
// step would be 1) and one difference of 63, its step.
TEST(ReferenceColumns, SteppedTimesAreThoseFormat15Defines) {
  TraceBuilder t;
  add_sample_metadata(t);
  PacketBuilder first(1, 0, 0);
  first.add(RecordBuilder(kFree, 19 + 21 * 5).tid(7).pointer(1));
  first.add(RecordBuilder(kFree, 19 + 21 * 7).pointer(2));
  first.add(RecordBuilder(kFree, 19 + 21 * 6).pointer(3));  // back by one step
  t.packet(first);
  PacketBuilder second(2, 1, 0);
  second.add(RecordBuilder(kFree, 5).tid(8).pointer(4));
  second.add(RecordBuilder(kFree, 5 + 21 * 100).pointer(5));
  t.packet(second);
  PacketBuilder again(1, 0, 1);
  again.add(RecordBuilder(kFree, 19 + 21 * 9).tid(7).pointer(6));
  t.packet(again);
  const Bytes blocks = blocks_of(t);
  const Bytes payload = pack(blocks, fmt::kLayoutStepTimes);
  ASSERT_EQ(unpack_ok(payload), blocks);
  const Bytes packed = columns_of(payload);
  const size_t times_at = header_of(payload).blocks_size + 6 * 4;
  // Key word 12, step 21: +2 -> zigzag 4, -1 -> 1, +100 -> 200 (0xC8 0x01).
  // Key word 0x200C, step 63: 124 -> 248 (0xF8 0x01), 5 -> 10, +1 -> 2.
  const Bytes expected = {21, 4, 1, 0xC8, 0x01, 63, 0xF8, 0x01, 10, 2};
  ASSERT_GE(packed.size(), times_at + expected.size());
  EXPECT_EQ(Bytes(packed.begin() + static_cast<long>(times_at), packed.begin() + static_cast<long>(times_at + expected.size())),
            expected);

  // A step of 0 is no step: refused by name.
  Bytes damaged = packed;
  damaged[times_at] = 0;
  compress::ExpandedBytes back;
  std::string problem;
  EXPECT_FALSE(compress::unpack(with_columns(payload, damaged), back, problem));
  EXPECT_NE(problem.find("the time step of the records of key word 12 is damaged"), std::string::npos) << problem;
}

// A step that narrows after many records: 300 Frees 42 ticks apart, then
// one 21 later, then one 7 later. The writer divides as it goes, so the
// first 300 codes were written for a step of 42 and are multiplied up
// twice: the times section holds what dividing every difference by 7
// gives (6 each, zigzag 12), and the blocks come back.
TEST(ReferenceColumns, TimesWrittenBeforeTheStepNarrowsAreRewrittenToIt) {
  TraceBuilder t;
  add_sample_metadata(t);
  PacketBuilder packet(1, 0, 0);
  uint64_t time = 1000;
  packet.add(RecordBuilder(kFree, time).tid(7).pointer(1));
  for (int i = 0; i < 300; ++i) packet.add(RecordBuilder(kFree, time += 42).pointer(2 + i));
  packet.add(RecordBuilder(kFree, time += 21).pointer(400));
  packet.add(RecordBuilder(kFree, time += 7).pointer(401));
  t.packet(packet);
  const Bytes blocks = blocks_of(t);
  const Bytes payload = pack(blocks, fmt::kLayoutStepTimes);
  ASSERT_EQ(unpack_ok(payload), blocks);
  const Bytes packed = columns_of(payload);
  // After the 303 records' sizes and keys: key word 12's step and codes.
  const size_t times_at = header_of(payload).blocks_size + 303 * 4;
  Bytes expected = {7};
  expected.insert(expected.end(), 300, 12);
  expected.push_back(6);  // 21 / 7 = 3
  expected.push_back(2);  // 7 / 7 = 1
  ASSERT_GE(packed.size(), times_at + expected.size());
  EXPECT_EQ(Bytes(packed.begin() + static_cast<long>(times_at), packed.begin() + static_cast<long>(times_at + expected.size())),
            expected);
}

// A word that holds a time on the trace's clock close to its record's own
// (an I/O call's start_ticks, read just before the call) is new in every
// record: the writer keeps it with the plain bytes instead of making it a
// reference column, whose every value would be a literal. The same word
// holding values that do not follow the clock is one, as is the buffer
// address beside it. One key word, so its mask byte follows the sizes and
// the times (docs/FORMAT.md, layout 4).
TEST(ReferenceColumns, TimesNearTheRecordsOwnAreNotReferenceColumns) {
  constexpr uint16_t kIoCall = 15;  // fd, result, start_ticks, buffer
  constexpr int kRecords = 200;
  constexpr uint64_t kFirstTick = 1ull << 40;
  auto mask_of = [&](uint64_t word1_from_clock) {
    TraceBuilder t;
    add_sample_metadata(t);
    PacketBuilder packet(1, 0, 0);
    for (int r = 0; r < kRecords; ++r) {
      const uint64_t now = kFirstTick + 100 * static_cast<uint64_t>(r);
      packet.add(RecordBuilder(kIoCall, now).u32(3).u32(0).u64(now - 40 + word1_from_clock).pointer(0x7f00'0000'1000ull + 64 * (r % 4)));
    }
    t.packet(packet);
    const Bytes blocks = blocks_of(t);
    const Bytes payload = pack(blocks, fmt::kLayoutWideRows);
    EXPECT_EQ(unpack_ok(payload), blocks);
    const Bytes packed = columns_of(payload);
    // The times: the step (100, one byte), the first record's time
    // (zigzag 2^41: a 6-byte varint), then a step each (one byte).
    const size_t mask_at = header_of(payload).blocks_size + 4 * size_t{kRecords} + 1 + 6 + (kRecords - 1);
    EXPECT_LT(mask_at, packed.size());
    return mask_at < packed.size() ? packed[mask_at] : 0xFF;
  };
  EXPECT_EQ(mask_of(0), 0b100) << "start_ticks 40 ticks before its record: plain bytes";
  EXPECT_EQ(mask_of(1ull << 44), 0b110) << "the same word 2^44 ticks off the clock: a reference column";
}

TEST(ReferenceColumns, PackHeapRecordsSmallerThanRecordColumns) {
  const Bytes blocks = heap_trace(99, 60, 400);
  const Bytes referenced = pack(blocks, fmt::kLayoutReferenceColumns);
  const Bytes columns = pack(blocks, fmt::kLayoutRecordColumns);
  EXPECT_EQ(unpack_ok(columns), blocks);  // format 1.1's layout still expands
  EXPECT_LT(referenced.size(), columns.size());
}

// A packer keeps its scratch memory, its model's arrays and its index
// from one run to the next: none of it may carry over into what it writes.
TEST(ReferenceColumns, AReusedPackerWritesWhatAFreshOneWrites) {
  const Bytes small = heap_trace(7, 10, 100);
  const Bytes large = heap_trace(8, 80, 300);
  const Bytes other = heap_trace(9, 30, 200);
  compress::Packer reused(3, fmt::kLayoutReferenceColumns);
  for (const Bytes* blocks : {&large, &small, &other, &large, &small}) {
    Bytes payload;
    std::string problem;
    ASSERT_TRUE(reused.pack(*blocks, payload, &problem)) << problem;
    EXPECT_EQ(payload, pack(*blocks, fmt::kLayoutReferenceColumns));
    EXPECT_EQ(unpack_ok(payload), *blocks);
  }
}

// Ranks counted across many words, blocks and super-blocks of live
// entries (live_ranks.h): 150,000 blocks allocated, then freed oldest,
// newest and at random, and their chunks allocated again.
TEST(ReferenceColumns, RanksFarFromTheNewestRoundTrip) {
  std::mt19937_64 rng(11);
  TraceBuilder t;
  add_sample_metadata(t);
  std::vector<uint64_t> live;
  uint64_t now = 1000;
  uint64_t sequence = 0;
  PacketBuilder packet(1, 0, sequence);
  int in_packet = 0;
  auto add = [&](RecordBuilder rec) {
    if (in_packet == 0) rec.tid(7);
    packet.add(rec);
    if (++in_packet == 1000) {
      t.packet(packet);
      packet = PacketBuilder(1, 0, ++sequence);
      in_packet = 0;
    }
  };
  for (uint64_t i = 0; i < 150000; ++i) {
    live.push_back(0x7f00'0000'0000ull + 32 * i);
    add(std::move(RecordBuilder(kAlloc, now += 40).pointer(live.back()).u64(24).u32(1)));
  }
  std::vector<uint64_t> freed;
  for (int i = 0; i < 30000; ++i) {
    const size_t at = i % 3 == 0 ? 0 : i % 3 == 1 ? live.size() - 1 : rng() % live.size();
    freed.push_back(live[at]);
    live.erase(live.begin() + static_cast<long>(at));
    add(std::move(RecordBuilder(kFree, now += 40).pointer(freed.back())));
    if (i % 4 == 0) {
      live.push_back(freed[rng() % freed.size()]);
      add(std::move(RecordBuilder(kAlloc, now += 40).pointer(live.back()).u64(24).u32(2)));
    }
  }
  if (in_packet > 0) t.packet(packet);
  const Bytes blocks = blocks_of(t);
  EXPECT_EQ(unpack_ok(pack(blocks, fmt::kLayoutReferenceColumns)), blocks);
}

// Records of many keys whose every word looks like an address: more
// reference columns than a source byte can name (255), and one value
// shared by every column.
TEST(ReferenceColumns, ManyPointerColumnsRoundTrip) {
  std::mt19937_64 rng(5);
  TraceBuilder t;
  add_sample_metadata(t);
  uint64_t ticks = 1;
  for (int p = 0; p < 8; ++p) {
    PacketBuilder packet(1, 0, static_cast<uint64_t>(p));
    for (uint16_t key = 20; key < 60; ++key) {
      for (int r = 0; r < 3; ++r) {
        RecordBuilder rec(key, ticks += 10);
        for (int w = 0; w < 9; ++w) rec.u64(rng() % 3 == 0 ? 0x7fff'0000'1000ull : (1ull << 40) + rng() % 64);
        packet.add(rec);
      }
    }
    t.packet(packet);
  }
  const Bytes blocks = blocks_of(t);
  EXPECT_EQ(unpack_ok(pack(blocks, fmt::kLayoutReferenceColumns)), blocks);
}

// A heap the model finds hard: 12,000 blocks live at once (ranks across
// many words, blocks and super-blocks of live counts), a few size classes
// (class lists far longer than the 128 entries a class rank looks at, so
// chunks come back at class ranks 1, 2..32 and beyond), chunks reused
// newest first, oldest first and at random, frees of pointers never
// allocated and of pointers freed already, and addresses that are all
// multiples of 4 KiB or 1 MiB (the same low bits for the index's hash).
Bytes adversarial_heap_trace(uint32_t seed) {
  std::mt19937_64 rng(seed);
  TraceBuilder t;
  add_sample_metadata(t);
  std::vector<std::pair<uint64_t, uint64_t>> live;        // address, size
  std::map<uint64_t, std::vector<uint64_t>> free_chunks;  // class -> addresses
  uint64_t top = 0x7f3a'0000'0000ull;
  uint64_t now = 1;
  uint64_t sequence = 0;
  PacketBuilder packet(1, 0, sequence);
  int in_packet = 0;
  auto add = [&](RecordBuilder rec) {
    if (in_packet == 0) rec.tid(3);
    packet.add(rec);
    if (++in_packet == 500) {
      t.packet(packet);
      packet = PacketBuilder(1, 0, ++sequence);
      in_packet = 0;
    }
  };
  const uint64_t sizes[] = {24, 40, 4096, 1 << 20};
  auto allocate = [&]() {
    const uint64_t size = sizes[rng() % 4];
    std::vector<uint64_t>& bin = free_chunks[(size + 23) / 16];
    uint64_t p = 0;
    const uint64_t how = rng() % 8;
    if (bin.empty() || how == 0) {
      p = top;
      top += size < 4096 ? 4096 : size;  // every address a multiple of 4 KiB
    } else {
      const size_t at = how < 5 ? bin.size() - 1 : how < 6 ? 0 : rng() % bin.size();
      p = bin[at];
      bin.erase(bin.begin() + static_cast<long>(at));
    }
    live.emplace_back(p, size);
    add(std::move(RecordBuilder(kAlloc, now += 30).pointer(p).u64(size).u32(static_cast<uint32_t>(rng() % 3))));
  };
  for (int i = 0; i < 12000; ++i) allocate();
  for (int i = 0; i < 40000; ++i) {
    const uint64_t what = rng() % 16;
    if (what < 7 || live.size() < 100) {
      allocate();
    } else if (what < 14) {
      const size_t at = what < 9 ? live.size() - 1 : what < 10 ? 0 : rng() % live.size();
      const auto [address, size] = live[at];
      live.erase(live.begin() + static_cast<long>(at));
      free_chunks[(size + 23) / 16].push_back(address);
      add(std::move(RecordBuilder(kFree, now += 30).pointer(address)));
    } else if (what == 14) {
      // Never allocated, or freed already (the newest free chunk of a class).
      const std::vector<uint64_t>& bin = free_chunks[(sizes[rng() % 4] + 23) / 16];
      const uint64_t p = rng() % 2 == 0 || bin.empty() ? 0x6000'0000'0000ull + (rng() % 4096) * 4096 : bin.back();
      add(std::move(RecordBuilder(kFree, now += 30).pointer(p)));
    } else {
      const size_t at = rng() % live.size();
      const uint64_t old = live[at].first;
      live[at].first = top;
      top += 1 << 20;
      RecordBuilder rec(kRealloc, now += 30);
      add(std::move(rec.pointer(old).pointer(live[at].first).u64(live[at].second).u32(1)));
    }
  }
  if (in_packet > 0) t.packet(packet);
  return blocks_of(t);
}

// Mallocs given back a chunk right at the class rank's limits: below 125
// to 128 dead entries of its class list (of the 128 looked at), or at
// class rank 31 to 33 (of the 32 named). Each case has its own size class.
Bytes class_limits_trace() {
  TraceBuilder t;
  add_sample_metadata(t);
  uint64_t now = 1;
  uint64_t address = 0x7e00'0000'0000ull;
  PacketBuilder packet(1, 0, 0);
  bool first = true;
  auto add = [&](RecordBuilder rec) {
    if (first) rec.tid(5);
    first = false;
    packet.add(rec);
  };
  auto alloc = [&](uint64_t p, uint64_t size) {
    add(std::move(RecordBuilder(kAlloc, now += 9).pointer(p).u64(size).u32(1)));
  };
  auto free_chunk = [&](uint64_t p) { add(std::move(RecordBuilder(kFree, now += 9).pointer(p))); };
  for (uint32_t dead = 125; dead <= 128; ++dead) {
    const uint64_t size = 16 * dead;
    std::vector<uint64_t> chunks;
    for (uint32_t i = 0; i < dead + 80; ++i) chunks.push_back(address += 0x10000);
    for (const uint64_t p : chunks) alloc(p, size);
    for (const uint64_t p : chunks) free_chunk(p);
    // Reuse the chunks just below the newest: `dead` entries die in the
    // middle of the free list, its newest stays live.
    for (uint32_t i = 0; i < dead; ++i) alloc(chunks[chunks.size() - 2 - i], size);
    alloc(chunks[chunks.size() - 2 - dead], size);
  }
  for (uint32_t rank = 31; rank <= 33; ++rank) {
    const uint64_t size = 16 * (200 + rank);
    std::vector<uint64_t> chunks;
    for (uint32_t i = 0; i < 40; ++i) chunks.push_back(address += 0x10000);
    for (const uint64_t p : chunks) alloc(p, size);
    for (const uint64_t p : chunks) free_chunk(p);
    alloc(chunks[chunks.size() - rank], size);
  }
  t.packet(packet);
  return blocks_of(t);
}

TEST(ReferenceColumns, AdversarialHeapRoundTrips) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Bytes blocks = adversarial_heap_trace(seed);
    EXPECT_EQ(unpack_ok(pack(blocks, fmt::kLayoutReferenceColumns)), blocks) << "seed " << seed;
  }
}

// Values that are not heap pointers at all: random 64-bit words (most
// never repeat), and a few values repeated at random across columns.
TEST(ReferenceColumns, ClassRankLimitsRoundTrip) {
  const Bytes blocks = class_limits_trace();
  EXPECT_EQ(unpack_ok(pack(blocks, fmt::kLayoutReferenceColumns)), blocks);
}

TEST(ReferenceColumns, RandomValuesRoundTrip) {
  std::mt19937_64 rng(21);
  TraceBuilder t;
  add_sample_metadata(t);
  std::vector<uint64_t> seen;
  uint64_t now = 1;
  for (int p = 0; p < 40; ++p) {
    PacketBuilder packet(1, 0, static_cast<uint64_t>(p));
    for (int r = 0; r < 400; ++r) {
      auto value = [&]() {
        if (!seen.empty() && rng() % 3 == 0) return seen[rng() % seen.size()];
        seen.push_back(rng() | 1ull << 40);
        return seen.back();
      };
      const uint16_t key = static_cast<uint16_t>(kAlloc + rng() % 3);
      RecordBuilder rec(key, now += 7);
      if (key == kAlloc) rec.pointer(value()).u64(rng() % 5000).u32(1);
      if (key == kFree) rec.pointer(value());
      if (key == kRealloc) rec.pointer(value()).pointer(value()).u64(rng() % 5000).u32(2);
      packet.add(rec);
    }
    t.packet(packet);
  }
  const Bytes blocks = blocks_of(t);
  EXPECT_EQ(unpack_ok(pack(blocks, fmt::kLayoutReferenceColumns)), blocks);
}


TEST(ReferenceColumns, DamagedColumnsAreRefusedOrExpandToTheDeclaredSize) {
  const Bytes blocks = heap_trace(3, 6, 120);
  const Bytes payload = pack(blocks, fmt::kLayoutReferenceColumns);
  const Bytes packed = columns_of(payload);
  const uint32_t blocks_size = header_of(payload).blocks_size;
  ASSERT_EQ(unpack_ok(with_columns(payload, packed)), blocks);
  std::mt19937 rng(11);
  int refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Bytes damaged = packed;
    // Damage the columns, not the block section (whose blocks the reader
    // checks afterwards by their CRC).
    for (int k = 0; k < 1 + trial % 4; ++k) {
      const size_t at = blocks_size + rng() % (damaged.size() - blocks_size);
      damaged[at] = static_cast<uint8_t>(trial % 3 == 0 ? damaged[at] ^ (1u << (rng() % 8)) : rng());
    }
    compress::ExpandedBytes back;
    std::string problem;
    if (compress::unpack(with_columns(payload, damaged), back, problem)) {
      EXPECT_EQ(back.size(), blocks.size());
    } else {
      EXPECT_NE(problem.find("its record columns do not add up"), std::string::npos) << problem;
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

TEST(ReferenceColumns, CutColumnsAreRefused) {
  const Bytes blocks = heap_trace(4, 6, 120);
  const Bytes payload = pack(blocks, fmt::kLayoutReferenceColumns);
  const Bytes packed = columns_of(payload);
  for (size_t keep : {packed.size() - 1, packed.size() - 9, packed.size() / 2, size_t{header_of(payload).blocks_size},
                      size_t{10}, size_t{0}}) {
    const Bytes cut(packed.begin(), packed.begin() + static_cast<long>(keep));
    compress::ExpandedBytes back;
    std::string problem;
    EXPECT_FALSE(compress::unpack(with_columns(payload, cut), back, problem)) << "kept " << keep;
    EXPECT_FALSE(problem.empty());
  }
}

TEST(ReferenceColumns, AReferenceToNoLiveValueIsNamed) {
  // Two frees of one pointer: the second is coded as a reference to the
  // first, in the free column itself. Naming a rank past the live values
  // must be refused.
  TraceBuilder t;
  add_sample_metadata(t);
  PacketBuilder packet(1, 0, 0);
  packet.add(RecordBuilder(kFree, 20).pointer(0x5555'0000'2000ull));
  packet.add(RecordBuilder(kFree, 30).pointer(0x5555'0000'2000ull));
  t.packet(packet);
  const Bytes blocks = blocks_of(t);
  const Bytes payload = pack(blocks, fmt::kLayoutReferenceColumns);
  ASSERT_EQ(unpack_ok(payload), blocks);
  Bytes packed = columns_of(payload);
  // The free group's columns end with: width byte, codes (0, 1), the
  // source byte, the literal's 8 planes. The code 1 is 10 bytes from the end.
  ASSERT_EQ(packed[packed.size() - 10], 1);
  packed[packed.size() - 10] = 9;
  compress::ExpandedBytes back;
  std::string problem;
  EXPECT_FALSE(compress::unpack(with_columns(payload, packed), back, problem));
  EXPECT_NE(problem.find("which holds no such live value"), std::string::npos) << problem;
}

// FNV-1a of some bytes.
uint64_t fnv1a(const Bytes& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (const uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

// The columns (before zstd) are what format 1.2's writer wrote for these
// traces, byte for byte: a faster model must name every value as the
// format says (docs/FORMAT.md, layout 2), and a round trip alone would not
// notice a writer and a reader that changed together.
TEST(ReferenceColumns, ColumnsAreThoseFormat12Defines) {
  EXPECT_EQ(fnv1a(columns_of(pack(heap_trace(99, 60, 400), fmt::kLayoutReferenceColumns))), 15473935962568690917ull);
  EXPECT_EQ(fnv1a(columns_of(pack(adversarial_heap_trace(1), fmt::kLayoutReferenceColumns))), 6524345277117385535ull);
  EXPECT_EQ(fnv1a(columns_of(pack(class_limits_trace(), fmt::kLayoutReferenceColumns))), 13990999548454095596ull);
}

}  // namespace
}  // namespace spoor::testing
