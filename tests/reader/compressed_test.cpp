// COMPRESSED blocks end to end: a trace is fed through the writers'
// BlockCompressor and read back; every event must equal the uncompressed
// trace's, and a damaged compressed file is read up to the damage.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>

#include "sample_trace.h"
#include "spoor/compress/packed_blocks.h"
#include "spoor/crc32c.h"
#include "spoor/host/block_compressor.h"
#include "test_support.h"

namespace spoor::testing {
namespace {

namespace fmt = spoor::format;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The sample's metadata, then `packets` packets per stream of mixed
// records: strings of varying length, thread changes, activity ids.
Bytes busy_trace(int packets) {
  TraceBuilder t;
  add_sample_metadata(t);
  uint64_t ticks = 1'000'000;
  uint32_t n = 0;
  for (int p = 0; p < packets; ++p) {
    for (uint32_t stream = 1; stream <= 2; ++stream) {
      PacketBuilder packet(stream, stream - 1, static_cast<uint64_t>(p));
      packet.lost_total(static_cast<uint64_t>(p) * stream);
      for (int r = 0; r < 40; ++r) {
        ticks += 37 + (n * 7919) % 300;
        ++n;
        const uint32_t tid = 100 * stream + (n / 9) % 3;
        if (n % 5 == 0) {
          RecordBuilder rec(kKeyReadStart, ticks);
          rec.activity(guid_from_seed(static_cast<uint8_t>(n)));
          if (r == 0 || n % 3 == 0) rec.tid(tid);
          packet.add(rec);
        } else if (n % 5 == 1) {
          RecordBuilder rec(kKeyReadStop, ticks);
          rec.activity(guid_from_seed(static_cast<uint8_t>(n - 1))).u64(n * 4096ull);
          if (r == 0) rec.tid(tid);
          packet.add(rec);
        } else {
          RecordBuilder rec = hello(ticks, n, std::string(n % 13, static_cast<char>('a' + n % 26)));
          if (r == 0 || n % 7 == 0) rec.tid(tid);
          packet.add(rec);
        }
      }
      t.packet(packet);
    }
  }
  t.stream_end(1, static_cast<uint64_t>(packets), 0, static_cast<uint64_t>(packets));
  t.stream_end(2, 2ull * static_cast<uint64_t>(packets), 8, static_cast<uint64_t>(packets));
  return t.bytes();
}

// A packet of 40 hello records `step` ticks apart, after `ticks` (moved on
// to the last), the first carrying `tid`; strings of 20-26 `fill`s.
PacketBuilder hello_packet(uint32_t stream, uint32_t cpu, uint64_t sequence, uint64_t& ticks, uint64_t step,
                           uint32_t tid, char fill) {
  PacketBuilder packet(stream, cpu, sequence);
  for (uint32_t r = 0; r < 40; ++r) {
    ticks += step;
    RecordBuilder rec = hello(ticks, r, std::string(20 + r % 7, fill));
    if (r == 0) rec.tid(tid);
    packet.add(rec);
  }
  return packet;
}

// A BlockCompressor's output that appends to `out`.
host::BlockCompressor::Output append_to(Bytes& out) {
  return [&out](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + size);
    return true;
  };
}

// A file that takes nothing until open() is called: the compressor's
// output waits at its gate meanwhile.
struct GatedFile {
  std::mutex lock;
  std::condition_variable gate;
  bool is_open = false;
  Bytes out;
  host::BlockCompressor::Output output() {
    return [this](const void* data, size_t size) {
      std::unique_lock held(lock);
      gate.wait(held, [&] { return is_open; });
      const auto* p = static_cast<const uint8_t*>(data);
      out.insert(out.end(), p, p + size);
      return true;
    };
  }
  void open() {
    {
      std::lock_guard held(lock);
      is_open = true;
    }
    gate.notify_all();
  }
};

// `raw` through a BlockCompressor, written in uneven pieces (as a
// TraceWriter writes a block piece by piece), runs of about run_bytes.
Bytes compress(const Bytes& raw, host::CompressionOptions options, host::CompressionStats* stats = nullptr) {
  Bytes out;
  options.enabled = true;
  host::BlockCompressor compressor(options, append_to(out));
  size_t at = 0;
  for (size_t piece = 1; at < raw.size(); piece = piece * 3 % 1021 + 1) {
    const size_t n = std::min(piece, raw.size() - at);
    compressor.write(raw.data() + at, n);
    at += n;
  }
  EXPECT_TRUE(compressor.finish());
  if (stats) *stats = compressor.stats();
  return out;
}

Bytes compress(const Bytes& raw, size_t run_bytes) {
  host::CompressionOptions options;
  options.level = 3;
  options.run_bytes = run_bytes;
  return compress(raw, options);
}

// Reads every event of a trace whose events live only until the next
// one: counts them, keeps none.
ReadAll read_all_counting(const reader::Trace& trace) {
  ReadAll r;
  reader::EventReader events(trace);
  reader::Event e;
  uint64_t n = 0;
  while (events.next(e)) ++n;
  EXPECT_EQ(events.events_read(), n);
  r.damages = events.damages();
  return r;
}

// Where each top-level block of `bytes` starts.
std::vector<size_t> block_offsets(const Bytes& bytes) {
  std::vector<size_t> offsets;
  for (size_t at = sizeof(fmt::FileHeader); at + sizeof(fmt::BlockHeader) <= bytes.size();) {
    fmt::BlockHeader h{};
    std::memcpy(&h, bytes.data() + at, sizeof h);
    offsets.push_back(at);
    at += sizeof h + h.size;
  }
  return offsets;
}

bool same_value(const reader::Value& a, const reader::Value& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, reader::Blob>) return std::ranges::equal(x.bytes, y.bytes);
        else if constexpr (std::is_same_v<T, reader::Pointer>) return x.address == y.address;
        else return x == y;
      },
      a);
}

void expect_same_event(const reader::Event& a, const reader::Event& b) {
  EXPECT_EQ(a.ticks, b.ticks);
  EXPECT_EQ(a.time_ns, b.time_ns);
  EXPECT_EQ(a.cpu, b.cpu);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.tid, b.tid);
  EXPECT_EQ(a.stream_id, b.stream_id);
  EXPECT_EQ(a.packet_sequence, b.packet_sequence);
  ASSERT_NE(a.descriptor, nullptr);
  ASSERT_NE(b.descriptor, nullptr);
  EXPECT_EQ(a.descriptor->name, b.descriptor->name);
  EXPECT_EQ(a.activity_id, b.activity_id);
  EXPECT_EQ(a.related_activity_id, b.related_activity_id);
  ASSERT_EQ(a.fields.size(), b.fields.size());
  for (size_t i = 0; i < a.fields.size(); ++i) {
    EXPECT_EQ(a.fields[i].field->name, b.fields[i].field->name);
    EXPECT_TRUE(same_value(a.fields[i].value, b.fields[i].value)) << a.descriptor->name << " field " << i;
  }
}

TEST(CompressedTrace, EveryEventEqualsTheUncompressedTraces) {
  const Bytes raw = busy_trace(30);
  const Bytes packed = compress(raw, 8 << 10);
  ASSERT_LT(packed.size() * 2, raw.size()) << "the columns and zstd should at least halve it";

  reader::Trace plain = open_ok(raw);
  reader::Trace compressed = open_ok(packed);
  EXPECT_FALSE(compressed.damage()) << compressed.damage()->message;
  const reader::CompressionSummary& z = compressed.compression();
  EXPECT_GT(z.blocks, 3u);
  EXPECT_EQ(z.raw_bytes, raw.size() - sizeof(fmt::FileHeader));
  EXPECT_EQ(z.stored_bytes, packed.size() - sizeof(fmt::FileHeader));
  EXPECT_EQ(plain.compression().blocks, 0u);

  const ReadAll a = read_all(plain);
  const ReadAll b = read_all(compressed);
  EXPECT_TRUE(b.damages.empty()) << b.damages[0].message;
  ASSERT_EQ(a.events.size(), 30u * 2 * 40);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    expect_same_event(a.events[i], b.events[i]);
  }
  ASSERT_EQ(compressed.streams().size(), 2u);
  ASSERT_TRUE(compressed.streams()[1].end);
  EXPECT_EQ(compressed.streams()[1].end->lost_total, 60u);
  EXPECT_EQ(compressed.streams()[1].end->abandoned_bytes, 8u);
}

void expect_same_events(const Bytes& a_bytes, const Bytes& b_bytes) {
  reader::Trace a_trace = open_ok(a_bytes), b_trace = open_ok(b_bytes);
  const ReadAll a = read_all(a_trace), b = read_all(b_trace);
  EXPECT_TRUE(b.damages.empty()) << b.damages[0].message;
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    expect_same_event(a.events[i], b.events[i]);
  }
}

TEST(CompressedTrace, RunsPackedOnSeveralThreadsComeOutInTheOrderTheyWereCut) {
  // Many small runs, four threads all allowed at once: runs finish in any
  // order, yet the file must be the one a single thread writes, byte for
  // byte (each run packs the same wherever it is packed).
  const Bytes raw = busy_trace(40);
  host::CompressionOptions one;
  one.run_bytes = 2 << 10;
  one.threads = 1;
  one.behind_level = one.level;  // one level, whichever runs wait
  host::CompressionOptions four = one;
  four.threads = 4;
  four.threads_at_first = 4;
  host::CompressionStats one_stats, four_stats;
  const Bytes a = compress(raw, one, &one_stats);
  const Bytes b = compress(raw, four, &four_stats);
  EXPECT_GT(four_stats.blocks, 20u);
  EXPECT_EQ(four_stats.blocks, one_stats.blocks);
  EXPECT_EQ(four_stats.raw_bytes, raw.size() - sizeof(fmt::FileHeader));
  EXPECT_GE(four_stats.threads, 1u);
  EXPECT_LE(four_stats.threads, 4u);
  EXPECT_EQ(a, b);
  expect_same_events(raw, b);
}

TEST(CompressedTrace, MoreThreadsAllowedMidwayChangeNoByte) {
  // One thread may pack until use_threads(3), as `spoor record` does when
  // the program ends; the file is the same as with one thread throughout.
  const Bytes raw = busy_trace(40);
  host::CompressionOptions options;
  options.enabled = true;
  options.run_bytes = 2 << 10;
  options.threads = 3;
  options.threads_at_first = 1;
  options.behind_level = options.level;  // one level, whichever runs wait
  Bytes out;
  host::BlockCompressor compressor(options, append_to(out));
  compressor.write(raw.data(), raw.size() / 2);
  compressor.use_threads(3);
  compressor.write(raw.data() + raw.size() / 2, raw.size() - raw.size() / 2);
  ASSERT_TRUE(compressor.finish());
  options.threads = 1;
  EXPECT_EQ(out, compress(raw, options));
}

TEST(CompressedTrace, AnIdlePackingThreadMakesTheDrainersNextBuffersAhead) {
  // Runs of 64 KiB; the drainer asks for spares after its first write.
  // Its first buffer goes out with the file header and comes back once it
  // is written; the next buffer is made ahead by the thread not allowed to
  // pack, so the drainer gets no buffer of its own after the first, and
  // the bytes are those of a single thread. Without the spares made ahead
  // the next run's buffer is the drainer's own (2 fresh).
  const Bytes raw = busy_trace(45);
  host::CompressionOptions options;
  options.enabled = true;
  options.run_bytes = 64 << 10;
  ASSERT_GT(raw.size(), options.run_bytes + 4096);
  ASSERT_LT(raw.size(), 2 * options.run_bytes);
  options.threads = 2;
  options.threads_at_first = 1;
  options.behind_level = options.level;  // one level: the bytes are compared with one thread's
  Bytes out;
  host::BlockCompressor compressor(options, append_to(out));
  // Waits for a spare to be ready, which needs only a packing thread
  // scheduled; bounded so that a broken build fails instead of hanging.
  auto wait_for_a_spare = [&] {
    for (int i = 0; i < 3000 && compressor.stats().spares_ready == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  compressor.write(raw.data(), 1000);
  compressor.make_spares_ahead();  // as a drainer behind its rings asks
  wait_for_a_spare();  // the first buffer back, or one made
  compressor.write(raw.data() + 1000, 1000);  // the bytes after the header move into it
  wait_for_a_spare();  // for the next run: one made (or the first buffer back)
  for (size_t at = 2000; at < raw.size(); at += 1000) compressor.write(raw.data() + at, std::min<size_t>(1000, raw.size() - at));
  ASSERT_TRUE(compressor.finish());
  const host::CompressionStats stats = compressor.stats();
  EXPECT_GE(stats.spares_made, 1u);
  // The first buffer is the drainer's own, unless a spare was made
  // between the trace turning large and the drainer asking for one.
  EXPECT_LE(stats.runs_gathered_fresh, 1u) << "a buffer after the first was the drainer's own";
  EXPECT_EQ(stats.blocks, 2u);
  options.threads = 1;
  EXPECT_EQ(out, compress(raw, options));
}

TEST(CompressedTrace, NoSpareBuffersAreMadeUnlessAsked) {
  // A drainer that keeps up takes its page faults itself: spares of a
  // whole run each would cost the program CPU and the recording pages.
  const Bytes raw = busy_trace(45);
  host::CompressionOptions options;
  options.run_bytes = 64 << 10;
  options.threads = 2;
  options.threads_at_first = 1;
  host::CompressionStats stats;
  const Bytes out = compress(raw, options, &stats);
  EXPECT_EQ(stats.spares_made, 0u);
  EXPECT_EQ(stats.blocks, 2u);
  expect_same_events(raw, out);
}

TEST(CompressedTrace, RunsOverTheBacklogLimitAreWrittenAsTheyAre) {
  const Bytes raw = busy_trace(10);
  host::CompressionOptions options;
  options.run_bytes = 4 << 10;
  options.backlog_limit = 1;  // every run waiting is over it
  // One thread packs and writes: the file is never behind when it takes
  // the next run (RunsWaitingForASlowFileArePackedNotStored).
  options.threads = 1;
  host::CompressionStats stats;
  const Bytes out = compress(raw, options, &stats);
  EXPECT_EQ(stats.blocks, 0u);
  EXPECT_EQ(stats.stored_bytes, raw.size() - sizeof(fmt::FileHeader));
  EXPECT_EQ(out, raw);
}

TEST(CompressedTrace, AFileThatFallsBehindBoundsTheRunsWaiting) {
  // The file takes nothing until the gate opens. write() must stop taking
  // bytes once the runs waiting hold the memory limit (1.5x the backlog
  // limit, at least 4 runs): a program that outruns the file must not
  // grow the recorder without end.
  const Bytes raw = busy_trace(200);
  host::CompressionOptions options;
  options.enabled = true;
  options.run_bytes = 4 << 10;
  options.backlog_limit = 1;
  GatedFile file;
  host::BlockCompressor compressor(options, file.output());
  std::atomic<size_t> taken{0};
  std::thread drainer([&] {
    for (size_t at = 0; at < raw.size(); at += 1000) {
      const size_t n = std::min<size_t>(1000, raw.size() - at);
      compressor.write(raw.data() + at, n);
      taken += n;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const size_t memory_limit = 4 * options.run_bytes;
  // Handed over: the limit, the run that went over it, and the next run
  // being gathered (a block may run past run_bytes).
  EXPECT_LT(taken.load(), memory_limit + 3 * options.run_bytes + 2048) << "of " << raw.size();
  EXPECT_LT(taken.load(), raw.size());
  file.open();
  drainer.join();
  ASSERT_TRUE(compressor.finish());
  const host::CompressionStats stats = compressor.stats();
  EXPECT_GT(stats.drain_wait_seconds, 0.1);
  EXPECT_EQ(stats.memory_limit, memory_limit);
  expect_same_events(raw, file.out);
}

TEST(CompressedTrace, RunsWaitingForASlowFileArePackedNotStored) {
  // Every run is over the backlog limit, which stores it when the file
  // keeps up (RunsOverTheBacklogLimitAreWrittenAsTheyAre). A file that
  // takes 25 ms per write is behind after the first runs: the rest are
  // packed. (Packing a 4 KiB run takes well under a millisecond, and a few
  // under the sanitizers on a loaded machine: at 2 ms per write, such a
  // run once found the file keeping up and stored nearly every run.)
  const Bytes raw = busy_trace(50);
  host::CompressionOptions options;
  options.enabled = true;
  options.run_bytes = 4 << 10;
  options.backlog_limit = 1;
  Bytes out;
  host::BlockCompressor compressor(options, [&](const void* data, size_t size) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    const auto* p = static_cast<const uint8_t*>(data);
    out.insert(out.end(), p, p + size);
    return true;
  });
  for (size_t at = 0; at < raw.size(); at += 1000) compressor.write(raw.data() + at, std::min<size_t>(1000, raw.size() - at));
  ASSERT_TRUE(compressor.finish());
  const host::CompressionStats stats = compressor.stats();
  EXPECT_GT(stats.raw_bytes, raw.size() * 3 / 4) << "stored: " << stats.stored_bytes;
  expect_same_events(raw, out);
}

TEST(CompressedTrace, RunsOverHalfTheBacklogLimitArePackedFast) {
  // One run, handed over at finish(): the backlog is that run (and maybe
  // the 32-byte header), over half the limit and under it.
  const Bytes raw = busy_trace(10);
  const size_t run = raw.size() - sizeof(fmt::FileHeader);
  host::CompressionOptions options;
  options.run_bytes = 2 * raw.size();
  options.backlog_limit = run + 100;
  host::CompressionStats stats;
  const Bytes out = compress(raw, options, &stats);
  EXPECT_EQ(stats.blocks, 1u);
  EXPECT_EQ(stats.fast_bytes, run);
  EXPECT_EQ(stats.behind_bytes, 0u);  // packed fast in the record columns, not at level 1 in the usual layout
  EXPECT_EQ(stats.stored_bytes, 0u);
  expect_same_events(raw, out);
}

// The zstd level of each COMPRESSED block of `out`: 1 or 3, by packing its
// blocks again at each and comparing byte for byte (0: neither).
std::vector<int> block_levels(const Bytes& out) {
  compress::Packer level_one(1), level_three(3);
  std::vector<int> levels;
  for (const size_t at : block_offsets(out)) {
    fmt::BlockHeader h{};
    std::memcpy(&h, out.data() + at, sizeof h);
    if (h.type != fmt::kBlockCompressed) continue;
    const std::span<const uint8_t> payload(out.data() + at + sizeof h, h.size);
    compress::ExpandedBytes blocks;
    std::string problem;
    EXPECT_TRUE(compress::unpack(payload, blocks, problem)) << problem;
    std::vector<uint8_t> one, three;
    EXPECT_TRUE(level_one.pack(blocks, one, &problem)) << problem;
    EXPECT_TRUE(level_three.pack(blocks, three, &problem)) << problem;
    EXPECT_NE(one, three) << "the run must tell the levels apart";
    levels.push_back(std::ranges::equal(payload, one) ? 1 : std::ranges::equal(payload, three) ? 3 : 0);
  }
  return levels;
}

// One packing thread, level 3 asked, runs of 8 KiB: the two tests of the
// level a run is packed at.
host::CompressionOptions one_thread_at_level_three() {
  host::CompressionOptions options;
  options.enabled = true;
  options.level = 3;
  options.run_bytes = 8 << 10;
  options.threads = 1;
  return options;
}

// A run the packing thread finds waiting when it comes for work is packed
// at zstd's level 1 (behind_level), in the same layout. The file takes
// nothing until every run but the last is handed over, so the one packing
// thread, back from writing the file header, finds each of them waiting.
TEST(CompressedTrace, RunsFoundWaitingArePackedAtTheBehindLevel) {
  const Bytes raw = busy_trace(60);
  const host::CompressionOptions options = one_thread_at_level_three();
  GatedFile file;
  host::BlockCompressor compressor(options, file.output());
  for (size_t at = 0; at < raw.size(); at += 1000) compressor.write(raw.data() + at, std::min<size_t>(1000, raw.size() - at));
  file.open();
  ASSERT_TRUE(compressor.finish());
  const Bytes& out = file.out;
  const host::CompressionStats stats = compressor.stats();
  expect_same_events(raw, out);
  const std::vector<int> levels = block_levels(out);
  ASSERT_EQ(levels.size(), stats.blocks);
  ASSERT_GE(levels.size(), 4u);
  // The last run, handed over by finish(), may have found the thread idle.
  for (size_t i = 0; i + 1 < levels.size(); ++i) EXPECT_EQ(levels[i], 1) << "run " << i;
  EXPECT_GE(stats.behind_bytes, stats.raw_bytes - 2 * options.run_bytes);
}

// A thread that waited for each run packs it at the level asked: the
// drainer hands a run over only once the one before is in the file. (The
// first run may find the thread still writing the file header: not
// checked.) stats() takes the lock the packing thread holds from counting
// a block until it waits for the next run, so a block counted means the
// thread found nothing waiting.
TEST(CompressedTrace, RunsAPackingThreadWaitedForArePackedAtTheLevelAsked) {
  const Bytes raw = busy_trace(60);
  const host::CompressionOptions options = one_thread_at_level_three();
  Bytes out;
  host::BlockCompressor compressor(options, append_to(out));
  // Where the drainer cuts runs: after the first block that takes a run to
  // run_bytes or more. Each run is written whole, then waited for.
  size_t written = 0, run_start = sizeof(fmt::FileHeader);
  uint64_t runs = 0, first_run = 0;
  for (const size_t at : block_offsets(raw)) {
    fmt::BlockHeader h{};
    std::memcpy(&h, raw.data() + at, sizeof h);
    const size_t end = at + sizeof h + h.size;
    if (end - run_start < options.run_bytes) continue;
    if (runs == 0) first_run = end - run_start;
    compressor.write(raw.data() + written, end - written);
    written = run_start = end;
    ++runs;
    for (int i = 0; i < 10000 && compressor.stats().blocks < runs; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(runs, 3u);
  compressor.write(raw.data() + written, raw.size() - written);
  ASSERT_TRUE(compressor.finish());
  const host::CompressionStats stats = compressor.stats();
  expect_same_events(raw, out);
  EXPECT_LE(stats.behind_bytes, first_run);
  const std::vector<int> levels = block_levels(out);
  ASSERT_EQ(levels.size(), runs + 1);
  for (size_t i = 1; i < levels.size(); ++i) EXPECT_EQ(levels[i], 3) << "run " << i;
}

TEST(CompressedTrace, APacketThatDoesNotWalkIsKeptAsItIsAndReadTheSame) {
  // A record claiming 200 bytes in a 16-byte packet: the columns cannot
  // hold it, so the run is compressed as it is, and the reader reports the
  // same damage in the same record as for the uncompressed file.
  TraceBuilder t;
  add_sample_metadata(t);
  t.packet(PacketBuilder(1, 0, 0).add(hello(1000, 1, "ok").tid(5)));
  t.packet(PacketBuilder(2, 1, 0).add(hello(1100, 2, "bad").tid(6).size_override(200)));
  const Bytes packed = compress(t.bytes(), 1 << 20);
  reader::Trace compressed = open_ok(packed);
  EXPECT_EQ(compressed.compression().blocks, 1u);
  const ReadAll r = read_all(compressed);
  ASSERT_EQ(r.events.size(), 1u);
  ASSERT_EQ(r.damages.size(), 1u);
  EXPECT_TRUE(contains(r.damages[0].message, "runs past the packet's end")) << r.damages[0].message;
  EXPECT_TRUE(contains(r.damages[0].message, "in the COMPRESSED block at byte 32")) << r.damages[0].message;
}

TEST(CompressedTrace, ATruncatedFileIsReadUpToTheCutBlock) {
  const Bytes raw = busy_trace(30);
  const Bytes packed = compress(raw, 8 << 10);
  const std::vector<size_t> offsets = block_offsets(packed);
  ASSERT_GT(offsets.size(), 3u);
  const size_t cut_block = offsets[offsets.size() - 2];
  const size_t cut = cut_block + 100;
  // What the blocks before the cut hold, read from a file that ends there.
  // (Events point into their Trace: each stays open while they are used.)
  reader::Trace before = open_ok(Bytes(packed.begin(), packed.begin() + static_cast<long>(cut_block)));
  const ReadAll whole_before = read_all(before);

  reader::Trace trace = open_ok(Bytes(packed.begin(), packed.begin() + static_cast<long>(cut)));
  ASSERT_TRUE(trace.damage());
  EXPECT_EQ(trace.damage()->offset, cut_block);
  EXPECT_TRUE(contains(trace.damage()->message, "truncated at byte " + std::to_string(cut) +
                                                    " inside a COMPRESSED block"))
      << trace.damage()->message;
  const ReadAll r = read_all(trace);
  EXPECT_GT(r.events.size(), 1000u);
  ASSERT_EQ(r.events.size(), whole_before.events.size());
  reader::Trace full_trace = open_ok(raw);
  const ReadAll full = read_all(full_trace);
  for (size_t i = 0; i < r.events.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    expect_same_event(r.events[i], whole_before.events[i]);
  }
  EXPECT_LT(r.events.size(), full.events.size());
}

TEST(CompressedTrace, ACorruptedByteIsACrcMismatchOfItsCompressedBlock) {
  const Bytes raw = busy_trace(20);
  Bytes packed = compress(raw, 8 << 10);
  const std::vector<size_t> offsets = block_offsets(packed);
  ASSERT_GT(offsets.size(), 3u);
  const size_t bad = offsets[2];
  packed[bad + sizeof(fmt::BlockHeader) + 40] ^= 0x5A;
  reader::Trace trace = open_ok(packed);
  ASSERT_TRUE(trace.damage());
  EXPECT_EQ(trace.damage()->offset, bad);
  EXPECT_TRUE(contains(trace.damage()->message,
                       "CRC mismatch in block at byte " + std::to_string(bad) + " (COMPRESSED)"))
      << trace.damage()->message;
  // The two blocks before it are read in full.
  reader::Trace before_trace = open_ok(Bytes(packed.begin(), packed.begin() + static_cast<long>(bad)));
  const ReadAll before = read_all(before_trace);
  EXPECT_EQ(read_all(trace).events.size(), before.events.size());
  EXPECT_GT(before.events.size(), 0u);
}

TEST(CompressedTrace, DamageAmongTheBlocksItHoldsNamesTheCompressedBlock) {
  // A packet whose CRC no longer matches, compressed as the writer would.
  // Opening reads the block's headers only, so the packet's CRC is checked
  // when a reader expands the block for its records: its stream stops
  // there, naming the packet and the COMPRESSED block.
  TraceBuilder t;
  add_sample_metadata(t);
  const size_t packet_at = t.size();
  t.packet(PacketBuilder(1, 0, 0).add(hello(1000, 1, "payload").tid(5)));
  t.packet(PacketBuilder(2, 1, 0).add(hello(1100, 2, "other").tid(6)));
  Bytes raw = t.bytes();
  raw[packet_data(packet_at) + 12] ^= 1;  // inside the string
  reader::Trace trace = open_ok(compress(raw, 1 << 20));
  EXPECT_FALSE(trace.damage());
  // The metadata was read.
  EXPECT_EQ(trace.events().size(), 3u);
  const ReadAll r = read_all(trace);
  ASSERT_EQ(r.damages.size(), 1u);
  EXPECT_EQ(r.damages[0].offset, sizeof(fmt::FileHeader));
  EXPECT_EQ(r.damages[0].stream_id, 1u);
  const std::string& m = r.damages[0].message;
  EXPECT_TRUE(contains(m, "CRC mismatch in block at byte " +
                              std::to_string(packet_at - sizeof(fmt::FileHeader)) +
                              " (PACKET) inside the COMPRESSED block at byte 32"))
      << m;
  // The other stream's packet is read.
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].stream_id, 2u);
}

TEST(CompressedTrace, OpeningExpandsNoBlockAndReadingExpandsEachOnce) {
  const Bytes raw = busy_trace(60);
  reader::Trace trace = open_ok(compress(raw, 8 << 10));
  const uint64_t blocks = trace.compression().blocks;
  ASSERT_GT(blocks, 5u);
  EXPECT_EQ(trace.compression().raw_bytes + sizeof(fmt::FileHeader), raw.size());
  EXPECT_EQ(trace.expansion_stats().expansions, 0u);
  std::set<uint32_t> with_packets;
  for (const reader::Stream& s : trace.streams())
    for (const reader::Packet& p : s.packets) with_packets.insert(p.container);
  EXPECT_GE(with_packets.size(), blocks - 1);  // the last may hold the STREAM_ENDs alone
  const ReadAll r = read_all(trace);
  EXPECT_TRUE(r.damages.empty());
  // The block after the last one read may be expanded ahead (on a second
  // CPU, while the reader decodes), even if it holds no packet.
  EXPECT_GE(trace.expansion_stats().expansions, with_packets.size());
  EXPECT_LE(trace.expansion_stats().expansions, blocks);
  // Unlimited (the default): every expansion stays, as the events point in.
  EXPECT_LE(trace.expansion_stats().peak_bytes, trace.compression().raw_bytes);
  EXPECT_GE(trace.expansion_stats().peak_bytes, trace.compression().raw_bytes - 200);
}

// Packets are written in the order the recorder drained them, not in time
// order: here all of stream 1's, then all of stream 2's, over the same
// times. A reader merging by time needs the blocks in the order of their
// packets' begin times, and the worker expands them ahead in that order,
// so the reader expands only the first block itself. (Ahead in file order,
// the reader expanded every block of stream 2 itself.)
TEST(CompressedTrace, BlocksAreExpandedAheadInTheOrderAReaderNeedsThem) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "blocks are expanded ahead only with a second CPU";
  TraceBuilder t;
  add_sample_metadata(t);
  for (uint32_t stream = 1; stream <= 2; ++stream) {
    uint64_t ticks = 1'000'000 + stream;
    for (uint64_t p = 0; p < 40; ++p) {
      t.packet(hello_packet(stream, stream - 1, p, ticks, 10, 100 + stream, 'a'));
    }
  }
  reader::Trace trace = open_ok(compress(t.bytes(), 8 << 10));
  std::set<uint32_t> first_half, second_half;
  for (const reader::Stream& s : trace.streams())
    for (const reader::Packet& p : s.packets) (s.id == 1 ? first_half : second_half).insert(p.container);
  ASSERT_GE(first_half.size(), 4u) << "stream 1 spans several blocks";
  ASSERT_GE(second_half.size(), 4u);
  ASSERT_LT(*first_half.begin(), *second_half.begin()) << "stream 2's blocks come after stream 1's in the file";
  const ReadAll r = read_all(trace);
  EXPECT_TRUE(r.damages.empty());
  EXPECT_EQ(r.events.size(), 2u * 40 * 40);
  EXPECT_EQ(trace.expansion_stats().by_readers, 1u)
      << "of " << trace.expansion_stats().expansions << " expansions";
}

// A limited trace keeps, of the blocks no stream is reading, the one a
// reader in time order needs latest: here stream 2's only packet lies in
// the first block, beside stream 1's first, and is read after all of
// stream 1's later blocks. Keeping the latest expanded instead dropped the
// first block and expanded it again.
TEST(CompressedTrace, ALimitedTraceKeepsTheBlockThatIsNeededAgain) {
  TraceBuilder t;
  add_sample_metadata(t);
  uint64_t ticks1 = 1'000'000, ticks2 = 2'000'000;
  t.packet(hello_packet(1, 0, 0, ticks1, 10, 101, 'a'));
  t.packet(hello_packet(2, 1, 0, ticks2, 10, 102, 'b'));
  for (uint64_t p = 1; p < 12; ++p) t.packet(hello_packet(1, 0, p, ticks1, 10, 101, 'a'));
  reader::Trace trace = open_ok(compress(t.bytes(), 4 << 10));
  const uint64_t blocks = trace.compression().blocks;
  std::set<uint32_t> stream1;
  uint32_t stream2_block = UINT32_MAX;
  for (const reader::Stream& s : trace.streams())
    for (const reader::Packet& p : s.packets) {
      if (s.id == 1) stream1.insert(p.container);
      else stream2_block = p.container;
    }
  ASSERT_EQ(stream2_block, *stream1.begin()) << "stream 2's packet is in stream 1's first block";
  ASSERT_GE(stream1.size(), 4u);
  ASSERT_EQ(stream1.size(), blocks) << "every block holds packets";
  // Room for one block beside the one being read, not for two.
  trace.limit_expanded_bytes(2 * trace.compression().raw_bytes / blocks);
  const ReadAll r = read_all_counting(trace);
  EXPECT_TRUE(r.damages.empty());
  EXPECT_EQ(trace.expansion_stats().expansions, blocks) << "each block expanded once";
}

TEST(CompressedTrace, ALimitedTraceReadsTheSameEventsHoldingFewBlocks) {
  const Bytes raw = busy_trace(200);
  const Bytes packed = compress(raw, 8 << 10);
  reader::Trace whole = open_ok(packed);
  reader::Trace limited = open_ok(packed);
  limited.limit_expanded_bytes(0);
  const uint64_t blocks = limited.compression().blocks;
  ASSERT_GT(blocks, 20u);
  // Events of a limited trace are valid until the next next(): compared
  // pair by pair as they come.
  reader::EventReader a(whole);
  reader::EventReader b(limited);
  reader::Event ea, eb;
  uint64_t n = 0;
  for (;; ++n) {
    const bool more_a = a.next(ea);
    const bool more_b = b.next(eb);
    ASSERT_EQ(more_a, more_b) << "event " << n;
    if (!more_a) break;
    SCOPED_TRACE("event " + std::to_string(n));
    expect_same_event(ea, eb);
  }
  EXPECT_EQ(n, 200u * 2 * 40);
  EXPECT_TRUE(b.damages().empty());
  // Two streams, the event handed out and the block expanded ahead hold
  // at most four blocks (each under 16 KiB: runs are cut past 8 KiB) at
  // once; the packets of one block are read together, so each is expanded
  // about once.
  EXPECT_LE(limited.expansion_stats().peak_bytes, 4u * (16u << 10));
  EXPECT_LE(limited.expansion_stats().expansions, blocks + blocks / 4);
  EXPECT_GE(whole.expansion_stats().peak_bytes, whole.compression().raw_bytes - 200);
}

TEST(CompressedTrace, StreamsOneAfterAnotherHoldOnlyTheBlocksBeingRead) {
  // Twenty streams that run one after another, as the processes of a
  // build do: each one's packets are in blocks of their own. A stream
  // that has not started yet, or has ended, holds no block.
  TraceBuilder t;
  add_sample_metadata(t);
  constexpr uint32_t kStreams = 20;
  for (uint32_t id = 3; id < 3 + kStreams; ++id) t.stream(id, kSamplePid, id % 4);
  uint64_t ticks = 1'000'000;
  for (uint32_t id = 3; id < 3 + kStreams; ++id) {
    for (uint64_t seq = 0; seq < 6; ++seq) {
      t.packet(hello_packet(id, id % 4, seq, ticks, 100, 1000 + id, 'x'));
    }
  }
  const Bytes packed = compress(t.bytes(), 8 << 10);
  reader::Trace limited = open_ok(packed);
  limited.limit_expanded_bytes(0);
  const uint64_t blocks = limited.compression().blocks;
  ASSERT_GE(blocks, kStreams);
  const ReadAll r = read_all_counting(limited);
  EXPECT_TRUE(r.damages.empty());
  // The stream being read, the event handed out and the block expanded
  // ahead: at most four blocks of under 16 KiB, whatever the streams.
  EXPECT_LE(limited.expansion_stats().peak_bytes, 4u * (16u << 10));
  EXPECT_LE(limited.expansion_stats().expansions, blocks);
}

TEST(CompressedTrace, ABlockWhoseRecordsCannotBeRebuiltEndsTheStreamsReadingIt) {
  // The header section is intact (opening reads it), the record columns
  // after it are not: zstd's own checks fail when the reader expands it.
  // (Large enough for several zstd blocks: the headers come first, in the
  // frame's first block, which the cut at its end leaves whole.)
  const Bytes raw = busy_trace(200);
  Bytes packed = compress(raw, 1 << 20);
  const std::vector<size_t> offsets = block_offsets(packed);
  ASSERT_EQ(offsets.size(), 1u);
  const size_t block = offsets[0];
  fmt::BlockHeader h{};
  std::memcpy(&h, packed.data() + block, sizeof h);
  uint8_t* payload = packed.data() + block + sizeof h;
  // Cut the frame short near its end and fix the block's sizes and CRC,
  // as a writer that stopped mid-frame and still sealed the block would.
  const uint32_t cut = 64;
  h.size -= cut;
  packed.erase(packed.begin() + static_cast<long>(block + sizeof h + h.size),
               packed.begin() + static_cast<long>(block + sizeof h + h.size + cut));
  h.crc32c = spoor::block_checksum(&h, payload, h.size);
  std::memcpy(packed.data() + block, &h, sizeof h);
  reader::Trace trace = open_ok(packed);
  EXPECT_FALSE(trace.damage());
  EXPECT_EQ(trace.streams().size(), 2u);
  const ReadAll r = read_all(trace);
  EXPECT_TRUE(r.events.empty());
  ASSERT_EQ(r.damages.size(), 2u);
  for (const reader::Damage& d : r.damages) {
    EXPECT_EQ(d.offset, block);
    EXPECT_TRUE(contains(d.message, "the COMPRESSED block at byte 32 cannot be expanded for its records"))
        << d.message;
  }
}

TEST(CompressedTrace, AnOldUncompressedFileStillReads) {
  TraceBuilder t = sample_trace();
  t.version(1, 0);
  reader::Trace trace = open_ok(t.bytes());
  EXPECT_EQ(trace.version_minor(), 0);
  EXPECT_EQ(read_all(trace).events.size(), static_cast<size_t>(kSampleEvents));
}

}  // namespace
}  // namespace spoor::testing
