// SYMBOL_MAP blocks (format 1.4): a JIT's perf map kept in the trace, as
// TraceWriter::symbol_map writes it and the reader joins its pieces.
#include <cstring>
#include <string>

#include "spoor/host/block_compressor.h"
#include "spoor/trace_writer.h"
#include "test_support.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

// A trace written by TraceWriter into memory: the header, a clock, and
// whatever `body` writes.
template <class Body>
Bytes written(Body body) {
  Bytes out;
  Sink sink{&out, [](void* context, const void* data, size_t size) {
              auto* bytes = static_cast<Bytes*>(context);
              const auto* p = static_cast<const uint8_t*>(data);
              bytes->insert(bytes->end(), p, p + size);
              return true;
            }};
  TraceWriter w(sink);
  w.file_header();
  fmt::ClockBlock clock{};
  clock.source = fmt::kClockMonotonicNs;
  clock.freq_millihz = 1'000'000'000'000;
  w.clock(clock);
  body(w);
  return out;
}

void piece(TraceWriter& w, uint32_t pid, uint64_t offset, const std::string& text) {
  const std::string path = "/tmp/perf-" + std::to_string(pid) + ".map";
  EXPECT_EQ(w.symbol_map(pid, fmt::kSymbolMapPerf, path.data(), path.size(), offset, text.data(), text.size()),
            Status::ok);
}

TEST(SymbolMap, PiecesAreJoinedPerPid) {
  const Bytes bytes = written([](TraceWriter& w) {
    piece(w, 7, 0, "1000 10 first\n10");
    piece(w, 8, 0, "3000 8 other\n");
    piece(w, 7, 16, "80 20 second\n");
  });
  const reader::Trace trace = open_ok(bytes);
  EXPECT_TRUE(trace.warnings().empty());
  ASSERT_EQ(trace.symbol_maps().size(), 2u);
  const reader::SymbolMap* seven = trace.symbol_map(7);
  ASSERT_NE(seven, nullptr);
  EXPECT_EQ(seven->kind, fmt::kSymbolMapPerf);
  EXPECT_EQ(seven->path, "/tmp/perf-7.map");
  EXPECT_EQ(seven->text, "1000 10 first\n1080 20 second\n");
  ASSERT_NE(trace.symbol_map(8), nullptr);
  EXPECT_EQ(trace.symbol_map(8)->text, "3000 8 other\n");
  EXPECT_EQ(trace.symbol_map(9), nullptr);
}

TEST(SymbolMap, APieceAtOffsetZeroStartsThePidsMapAfresh) {
  // The pid was reused: the later process's map replaces the earlier one.
  const Bytes bytes = written([](TraceWriter& w) {
    piece(w, 7, 0, "1000 10 old\n");
    piece(w, 7, 0, "2000 10 new\n");
  });
  const reader::Trace trace = open_ok(bytes);
  ASSERT_EQ(trace.symbol_maps().size(), 1u);
  EXPECT_EQ(trace.symbol_map(7)->text, "2000 10 new\n");
}

TEST(SymbolMap, APieceThatDoesNotFollowTheTextIsLeftOutWithAWarning) {
  const Bytes bytes = written([](TraceWriter& w) {
    piece(w, 7, 0, "1000 10 a\n");
    piece(w, 7, 50, "2000 10 b\n");  // bytes 10..49 are missing
    piece(w, 9, 10, "3000 10 c\n");  // no start at all
  });
  const reader::Trace trace = open_ok(bytes);
  EXPECT_FALSE(trace.damage().has_value());
  EXPECT_EQ(trace.symbol_map(7)->text, "1000 10 a\n");
  EXPECT_EQ(trace.symbol_map(9), nullptr);
  ASSERT_EQ(trace.warnings().size(), 2u);
  EXPECT_NE(trace.warnings()[0].find("(pid 7) holds bytes 50 on of a map read up to byte 10"), std::string::npos)
      << trace.warnings()[0];
  EXPECT_NE(trace.warnings()[1].find("(pid 9) holds bytes 10 on of a map read up to byte 0"), std::string::npos)
      << trace.warnings()[1];
}

TEST(SymbolMap, APathRunningPastTheBlockIsDamageNamingIt) {
  TraceBuilder t;
  fmt::SymbolMapBlock b{};
  b.pid = 7;
  b.kind = fmt::kSymbolMapPerf;
  b.path_size = 40;
  Bytes payload(sizeof b + 10, 'x');
  std::memcpy(payload.data(), &b, sizeof b);
  t.block(fmt::kBlockSymbolMap, payload);
  const reader::Trace trace = open_ok(t.bytes());
  ASSERT_TRUE(trace.damage().has_value());
  EXPECT_NE(trace.damage()->message.find("bad SYMBOL_MAP block at byte 32: its 40-byte path runs past the block's end"),
            std::string::npos)
      << trace.damage()->message;
  EXPECT_TRUE(trace.symbol_maps().empty());
}

TEST(SymbolMap, KeptWhenTheCompressedBlockHoldingItIsDropped) {
  // The reader copies the text out: a trace read in bounded memory drops
  // expanded blocks as it goes, the map must outlive them.
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::to_string(0x1000 + i * 16) + " 10 function_" + std::to_string(i) + "\n";
  const Bytes raw = written([&](TraceWriter& w) { piece(w, 7, 0, text); });
  Bytes packed;
  host::CompressionOptions options;
  options.enabled = true;
  {
    host::BlockCompressor compressor(options, [&](const void* data, size_t size) {
      const auto* p = static_cast<const uint8_t*>(data);
      packed.insert(packed.end(), p, p + size);
      return true;
    });
    compressor.write(raw.data(), raw.size());
    EXPECT_TRUE(compressor.finish());
  }
  reader::Trace trace = open_ok(packed);
  EXPECT_EQ(trace.compression().blocks, 1u);
  EXPECT_LT(packed.size(), raw.size() / 2);
  trace.limit_expanded_bytes(0);
  read_all(trace);
  ASSERT_NE(trace.symbol_map(7), nullptr);
  EXPECT_EQ(trace.symbol_map(7)->text, text);
}

}  // namespace
}  // namespace spoor::testing
