// Damage: a bad block stops the walk there and keeps what came before; a
// bad record stops its stream there and the other streams go on. Never a
// crash, whatever the bytes.
#include <cstring>
#include <functional>
#include <random>

#include "sample_trace.h"
#include "spoor/crc32c.h"
#include "test_support.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Records in the complete PACKET blocks that end at or before `cut`.
size_t records_before(const TraceBuilder& t, size_t cut) {
  const auto& offs = t.block_offsets();
  size_t records = 0;
  for (size_t i = 0; i < offs.size(); ++i) {
    const size_t end = i + 1 < offs.size() ? offs[i + 1] : t.size();
    fmt::BlockHeader h{};
    std::memcpy(&h, t.bytes().data() + offs[i], sizeof h);
    if (end > cut || h.type != fmt::kBlockPacket) continue;
    fmt::PacketBlock p{};
    std::memcpy(&p, t.bytes().data() + offs[i] + sizeof h, sizeof p);
    records += p.record_count;
  }
  return records;
}

TEST(BlockDamage, TruncationAtEveryByteKeepsEveryCompleteBlock) {
  const TraceBuilder t = sample_trace();
  const Bytes& all = t.bytes();
  const auto& offs = t.block_offsets();
  for (size_t cut = 0; cut < all.size(); ++cut) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    reader::Result<reader::Trace> trace =
        reader::Trace::from_bytes(Bytes(all.begin(), all.begin() + cut));
    if (cut < sizeof(fmt::FileHeader)) {
      ASSERT_FALSE(trace.ok());
      EXPECT_TRUE(contains(trace.error(), cut == 0 ? "empty" : "too short")) << trace.error();
      continue;
    }
    ASSERT_TRUE(trace.ok()) << trace.error();
    size_t block = 0;  // the block the cut falls in, if any
    bool at_boundary = cut == sizeof(fmt::FileHeader);
    for (size_t i = 0; i < offs.size(); ++i) {
      if (offs[i] == cut) at_boundary = true;
      if (offs[i] <= cut) block = i;
    }
    if (at_boundary) {
      EXPECT_FALSE(trace->damage().has_value()) << trace->damage()->message;
    } else {
      ASSERT_TRUE(trace->damage().has_value());
      EXPECT_EQ(trace->damage()->offset, offs[block]);
      EXPECT_TRUE(contains(trace->damage()->message, "truncated at byte " + std::to_string(cut)))
          << trace->damage()->message;
    }
    ReadAll r = read_all(*trace);
    EXPECT_TRUE(r.damages.empty()) << r.damages[0].message;
    EXPECT_EQ(r.events.size(), records_before(t, cut));
  }
}

TEST(BlockDamage, TruncatedPacketNamesItsStreamAndSize) {
  const TraceBuilder t = sample_trace();
  const size_t packet = t.block_offsets()[9];  // stream 2's first packet
  const size_t cut = packet + 70;
  reader::Trace trace = open_ok(Bytes(t.bytes().begin(), t.bytes().begin() + cut));
  ASSERT_TRUE(trace.damage().has_value());
  const std::string& m = trace.damage()->message;
  EXPECT_TRUE(contains(m, "truncated at byte " + std::to_string(cut) + " inside a PACKET block of " +
                              std::to_string(t.block_offsets()[10] - packet) + " bytes starting at byte " +
                              std::to_string(packet) + " (stream 2, cpu 1)"))
      << m;
}

TEST(BlockDamage, CrcMismatchIsReportedAtItsBlock) {
  const TraceBuilder t = sample_trace();
  const auto& offs = t.block_offsets();
  for (size_t i = 0; i < offs.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(i));
    Bytes bytes = t.bytes();
    bytes[offs[i] + sizeof(fmt::BlockHeader)] ^= 0x40;  // the payload's first byte
    reader::Trace trace = open_ok(bytes);
    ASSERT_TRUE(trace.damage().has_value());
    EXPECT_EQ(trace.damage()->offset, offs[i]);
    EXPECT_TRUE(contains(trace.damage()->message,
                         "CRC mismatch in block at byte " + std::to_string(offs[i]) + " ("))
        << trace.damage()->message;
    EXPECT_EQ(read_all(trace).events.size(), records_before(t, offs[i]));
  }
}

TEST(BlockDamage, CrcMismatchInAPacketNamesItsStream) {
  const TraceBuilder t = sample_trace();
  Bytes bytes = t.bytes();
  const size_t packet = t.block_offsets()[10];  // stream 1, sequence 1
  bytes[packet + 16 + 48] ^= 1;
  reader::Trace trace = open_ok(bytes);
  ASSERT_TRUE(trace.damage().has_value());
  EXPECT_TRUE(contains(trace.damage()->message, "(PACKET, stream 1, cpu 0)"))
      << trace.damage()->message;
}

TEST(BlockDamage, BadSyncWordStopsTheWalk) {
  const TraceBuilder t = sample_trace();
  Bytes bytes = t.bytes();
  const size_t at = t.block_offsets()[3];
  bytes[at] = 'X';
  reader::Trace trace = open_ok(bytes);
  ASSERT_TRUE(trace.damage().has_value());
  EXPECT_EQ(trace.damage()->offset, at);
  EXPECT_TRUE(contains(trace.damage()->message, "no block starts at byte " + std::to_string(at)));
  EXPECT_EQ(trace.streams().size(), 1u);  // the block before it was kept
}

TEST(BlockDamage, OversizedPayloadIsRejected) {
  TraceBuilder t = sample_trace();
  Bytes bytes = t.bytes();
  const size_t at = t.block_offsets()[2];
  const uint32_t huge = fmt::kMaxBlockPayload + 1;
  std::memcpy(bytes.data() + at + 8, &huge, 4);
  reader::Trace trace = open_ok(bytes);
  ASSERT_TRUE(trace.damage().has_value());
  EXPECT_TRUE(contains(trace.damage()->message, "over the 64 MiB limit"));
}

TEST(BlockDamage, UnknownFieldTypeRejectsTheEventBlock) {
  TraceBuilder t;
  add_sample_metadata(t);
  const size_t at = t.size();
  t.event({.pid = kSamplePid, .key = 9, .name = "Future", .fields = {{fmt::kFieldU8, "ok"}, {99, "odd"}}});
  t.packet(PacketBuilder(1, 0, 0).add(hello(1, 1, "x").tid(1)));
  reader::Trace trace = open_ok(t.bytes());
  ASSERT_TRUE(trace.damage().has_value());
  EXPECT_EQ(trace.damage()->offset, at);
  const std::string& m = trace.damage()->message;
  EXPECT_TRUE(contains(m, "bad EVENT block at byte " + std::to_string(at))) << m;
  EXPECT_TRUE(contains(m, "event 'Future'")) << m;
  EXPECT_TRUE(contains(m, "field 'odd' has unknown type 99")) << m;
  EXPECT_EQ(trace.events().size(), 3u);  // the sample's, before it
}

TEST(BlockDamage, LayoutProblemsAreDamage) {
  struct Case {
    const char* name;
    std::function<void(TraceBuilder&)> add;
    const char* expected;
  };
  const Case cases[] = {
      {"packet of an undefined stream",
       [](TraceBuilder& t) { t.packet(PacketBuilder(42, 0, 0).add(hello(1, 1, "").tid(1))); },
       "belongs to stream 42, which no STREAM block before it defines"},
      {"stream id used twice", [](TraceBuilder& t) { t.stream(1, kSamplePid, 5); },
       "stream id 1 was already used"},
      {"event of an undefined provider",
       [](TraceBuilder& t) {
         t.event({.pid = kSamplePid, .key = 9, .provider_index = 3, .name = "X", .fields = {}});
       },
       "names provider index 3"},
      {"event key 0",
       [](TraceBuilder& t) { t.event({.pid = kSamplePid, .key = 0, .name = "Zero", .fields = {}}); },
       "has key 0"},
      {"short clock",
       [](TraceBuilder& t) {
         const uint8_t b[8] = {};
         t.block(fmt::kBlockClock, b);
       },
       "too short for the 40-byte clock"},
      {"bytes left over in a stream block",
       [](TraceBuilder& t) {
         const uint8_t b[20] = {9};
         t.block(fmt::kBlockStream, b);
       },
       "4 bytes are left over"},
      {"packet data size disagrees",
       [](TraceBuilder& t) {
         Bytes p = PacketBuilder(1, 0, 5).add(hello(1, 1, "").tid(1)).payload();
         p.push_back(0);
         p.push_back(0);
         t.block(fmt::kBlockPacket, p);
       },
       "declares 20 bytes of records but 22 follow it"},
      {"pointer size 3", [](TraceBuilder& t) { t.process(5, "odd", {}, 3); }, "pointer size 3"},
      {"end of an undefined stream", [](TraceBuilder& t) { t.stream_end(8, 0, 0, 0); },
       "ends stream 8"},
      {"string past the block",
       [](TraceBuilder& t) {
         Bytes p(24, 0);
         p.push_back(200);  // a 200-byte name, and nothing after
         p.push_back(0);
         t.block(fmt::kBlockProvider, p);
       },
       "provider name runs past"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TraceBuilder t;
    add_sample_metadata(t);
    const size_t at = t.size();
    c.add(t);
    reader::Trace trace = open_ok(t.bytes());
    ASSERT_TRUE(trace.damage().has_value());
    EXPECT_EQ(trace.damage()->offset, at);
    EXPECT_TRUE(contains(trace.damage()->message, c.expected)) << trace.damage()->message;
  }
}

// A trace whose stream 1, packet 1 holds a good record, then whatever
// `bad` adds, then another good record. Stream 2 is intact.
struct RecordDamage {
  TraceBuilder trace;
  uint64_t bad_offset;
};

RecordDamage with_bad_record(const std::function<void(PacketBuilder&)>& bad) {
  RecordDamage d;
  TraceBuilder& t = d.trace;
  add_sample_metadata(t);
  t.packet(PacketBuilder(1, 0, 0).add(hello(100, 1, "a").tid(1)));
  t.packet(PacketBuilder(2, 1, 0).add(hello(150, 10, "x").tid(2)).add(hello(250, 11, "y")));
  PacketBuilder p(1, 0, 1);
  const RecordBuilder good = hello(200, 2, "b").tid(1);
  p.add(good);
  bad(p);
  p.add(hello(300, 3, "c"));
  d.bad_offset = packet_data(t.size()) + good.encode().size();
  t.packet(p);
  t.packet(PacketBuilder(1, 0, 2).add(hello(400, 4, "d").tid(1)));
  t.packet(PacketBuilder(2, 1, 1).add(hello(500, 12, "z").tid(2)));
  return d;
}

TEST(RecordDamage, EachBadRecordStopsOnlyItsStream) {
  struct Case {
    const char* name;
    std::function<void(PacketBuilder&)> bad;
    const char* expected;
  };
  const uint8_t overlong_uleb[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F};
  const uint8_t cut_uleb[] = {0x80, 0x80};
  const uint8_t extra[] = {0, 0, 0, 0};
  const uint8_t abc[] = {'a', 'b', 'c'};
  const Case cases[] = {
      {"size below the header",
       [](PacketBuilder& p) { p.add(hello(250, 9, "").size_override(8)); },
       "the record size 8 is invalid"},
      // An odd first byte marks a short record (format 1.3): size 14, key 0.
      {"odd size", [](PacketBuilder& p) { p.add(hello(250, 9, "").size_override(15)); },
       "event key 0 has no EVENT block"},
      {"running past its packet",
       [](PacketBuilder& p) { p.add(hello(250, 9, "").size_override(200)); },
       "runs past the packet's end"},
      {"no descriptor", [](PacketBuilder& p) { p.add(RecordBuilder(77, 250)); },
       "event key 77 has no EVENT block for pid 100"},
      {"uleb128 overflowing",
       [&](PacketBuilder& p) { p.add(RecordBuilder(kKeyHello, 250).u32(1).raw(overlong_uleb)); },
       "field 'msg' (string) has a length that overflows 64 bits"},
      {"uleb128 cut off",
       [&](PacketBuilder& p) { p.add(RecordBuilder(kKeyHello, 250).u32(1).raw(cut_uleb)); },
       "field 'msg' (string) has a length that runs past the record's end"},
      {"string longer than the record",
       [&](PacketBuilder& p) {
         p.add(RecordBuilder(kKeyHello, 250).u32(1).uleb128(50).raw(abc));
       },
       "field 'msg' (string) claims 50 bytes but the record has 3 left"},
      {"fixed field past the record",
       [](PacketBuilder& p) { p.add(RecordBuilder(kKeyHello, 250).u16(1)); },
       "field 'n' (u32) needs 4 bytes but the record has 2 left"},
      {"bytes after the fields",
       [&](PacketBuilder& p) { p.add(hello(250, 1, "a").raw(extra)); },
       "at most 1 byte of padding"},
      {"activity id past the record",
       [](PacketBuilder& p) { p.add(RecordBuilder(kKeyReadStart, 250).activity({}).size_override(20)); },
       "the activity id runs past the record's end"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RecordDamage d = with_bad_record(c.bad);
    reader::Trace trace = open_ok(d.trace.bytes());
    EXPECT_FALSE(trace.damage().has_value());
    ReadAll r = read_all(trace);
    ASSERT_EQ(r.damages.size(), 1u);
    const reader::Damage& damage = r.damages[0];
    EXPECT_EQ(damage.offset, d.bad_offset);
    EXPECT_EQ(damage.stream_id, 1u);
    EXPECT_TRUE(contains(damage.message, "stream 1, packet 1 (cpu 0), record 1 at byte " +
                                             std::to_string(d.bad_offset) + ": "))
        << damage.message;
    EXPECT_TRUE(contains(damage.message, c.expected)) << damage.message;
    // Stream 1 gave the two records before the bad one; stream 2 all four.
    std::vector<int64_t> times;
    for (const reader::Event& e : r.events) times.push_back(e.time_ns);
    EXPECT_EQ(times, (std::vector<int64_t>{100, 150, 200, 250, 500}));
  }
}

TEST(RecordDamage, FirstRecordOfAPacketMustCarryAThreadId) {
  TraceBuilder t;
  add_sample_metadata(t);
  const uint64_t at = packet_data(t.size());
  t.packet(PacketBuilder(1, 0, 0).add(hello(100, 1, "a")));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  ASSERT_EQ(r.damages.size(), 1u);
  EXPECT_EQ(r.damages[0].offset, at);
  EXPECT_TRUE(contains(r.damages[0].message, "carries no thread id"));
}

TEST(RecordDamage, HeaderCutByThePacketEnd) {
  TraceBuilder t;
  add_sample_metadata(t);
  const RecordBuilder good = hello(100, 1, "a").tid(1);
  const uint64_t at = packet_data(t.size()) + good.encode().size();
  const uint8_t stub[] = {12, 0, 1, 0};
  t.packet(PacketBuilder(1, 0, 0).add(good).raw(stub));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  EXPECT_EQ(r.events.size(), 1u);
  ASSERT_EQ(r.damages.size(), 1u);
  EXPECT_EQ(r.damages[0].offset, at);
  EXPECT_TRUE(contains(r.damages[0].message, "the record header runs past the packet's end (4 bytes left"))
      << r.damages[0].message;
}

TEST(RecordDamage, RecordCountMustMatchTheData) {
  TraceBuilder t;
  add_sample_metadata(t);
  const size_t at = t.size();
  t.packet(PacketBuilder(1, 0, 0).record_count(3).add(hello(100, 1, "a").tid(1)));
  reader::Trace trace = open_ok(t.bytes());
  ReadAll r = read_all(trace);
  EXPECT_EQ(r.events.size(), 1u);
  ASSERT_EQ(r.damages.size(), 1u);
  EXPECT_EQ(r.damages[0].offset, at);
  EXPECT_TRUE(contains(r.damages[0].message, "counts 3 records but its data holds 1"));
}

// Recomputes every block's CRC, so mutated payloads reach the parsers.
void fix_crcs(Bytes& bytes, const std::vector<size_t>& offsets) {
  for (size_t off : offsets) {
    if (off + sizeof(fmt::BlockHeader) > bytes.size()) break;
    fmt::BlockHeader h{};
    std::memcpy(&h, bytes.data() + off, sizeof h);
    if (h.size > bytes.size() - off - sizeof h) break;
    h.crc32c = spoor::block_checksum(&h, bytes.data() + off + sizeof h, h.size);
    std::memcpy(bytes.data() + off, &h, sizeof h);
  }
}

TEST(RecordDamage, RandomBytesNeverCrashTheReader) {
  const TraceBuilder t = sample_trace();
  std::mt19937 rng(12345);
  for (int round = 0; round < 4000; ++round) {
    Bytes bytes = t.bytes();
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      // Mostly past the header, where blocks are; sometimes anywhere.
      const size_t at = rng() % 8 == 0 ? rng() % bytes.size() : 32 + rng() % (bytes.size() - 32);
      bytes[at] = static_cast<uint8_t>(rng());
    }
    fix_crcs(bytes, t.block_offsets());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    reader::Result<reader::Trace> trace = reader::Trace::from_bytes(bytes);
    if (!trace.ok()) continue;
    const uint8_t* begin = trace->bytes().data();
    const uint8_t* end = begin + trace->bytes().size();
    ReadAll r = read_all(*trace);
    for (const reader::Event& e : r.events) {
      ASSERT_NE(e.descriptor, nullptr);
      for (const reader::FieldValue& f : e.fields) {
        if (auto* s = std::get_if<std::string_view>(&f.value)) {
          ASSERT_GE(reinterpret_cast<const uint8_t*>(s->data()), begin);
          ASSERT_LE(reinterpret_cast<const uint8_t*>(s->data() + s->size()), end);
        }
      }
    }
  }
}

}  // namespace
}  // namespace spoor::testing
