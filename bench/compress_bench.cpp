// How well and how fast COMPRESSED blocks pack a recorded trace, per zstd
// level: the packing thread's work (BlockCompressor), single-threaded, on
// one core, without the file I/O.
//
//   spoor_bench_compress TRACE [LEVEL...]     (default levels 1 3 6 9)
//
// SPOOR_BENCH_LAYOUT=1, 2 or 3 packs in format 1.1's record-columns layout,
// 1.2's reference columns or 1.5's (time differences in their step) instead
// of layout 4 (1.5's with bodies over 256 bytes in rows). Every run is also expanded again (the
// reader's work, timed by its CPU time) and compared with its blocks.
//
// TRACE must be uncompressed (spoor record --compress=none). Its blocks are
// cut into runs of 8 MiB (SPOOR_BENCH_RUN_MIB) at block boundaries, as the
// recorder cuts them.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "spoor/compress/packed_blocks.h"
#include "spoor/format.h"

namespace fmt = spoor::format;

// This thread's CPU time: on a shared machine it moves far less than the
// wall time does.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: spoor_bench_compress TRACE [LEVEL...]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), {});
  if (file.size() < sizeof(fmt::FileHeader)) {
    std::fprintf(stderr, "spoor_bench_compress: cannot read '%s'\n", argv[1]);
    return 1;
  }
  // Runs of about 8 MiB (SPOOR_BENCH_RUN_MIB) of whole blocks, the
  // recorder's CompressionOptions::run_bytes; count the records on the way.
  const char* run_mib = std::getenv("SPOOR_BENCH_RUN_MIB");
  const size_t run_bytes = (run_mib != nullptr ? std::strtoull(run_mib, nullptr, 10) : 8) << 20;
  std::vector<std::span<const uint8_t>> runs;
  uint64_t records = 0;
  size_t run_start = sizeof(fmt::FileHeader);
  for (size_t at = run_start; at + sizeof(fmt::BlockHeader) <= file.size();) {
    fmt::BlockHeader h{};
    std::memcpy(&h, file.data() + at, sizeof h);
    if (h.type == fmt::kBlockCompressed) {
      std::fprintf(stderr, "spoor_bench_compress: '%s' is compressed already\n", argv[1]);
      return 1;
    }
    if (h.type == fmt::kBlockPacket && h.size >= sizeof(fmt::PacketBlock)) {
      fmt::PacketBlock p{};
      std::memcpy(&p, file.data() + at + sizeof h, sizeof p);
      records += p.record_count;
    }
    at += sizeof h + h.size;
    if (at - run_start >= run_bytes || at >= file.size()) {
      runs.emplace_back(file.data() + run_start, std::min(at, file.size()) - run_start);
      run_start = at;
    }
  }
  std::vector<int> levels;
  for (int i = 2; i < argc; ++i) levels.push_back(std::atoi(argv[i]));
  if (levels.empty()) levels = {1, 3, 6, 9};
  std::printf("%s: %zu bytes, %llu records, %zu runs\n", argv[1], file.size(),
              static_cast<unsigned long long>(records), runs.size());
  // MB/s: of uncompressed trace, per second of wall time and per second of
  // the packing thread's CPU time; then per second of CPU time expanding.
  std::printf("%6s %12s %8s %10s %10s %10s %10s\n", "LEVEL", "BYTES", "RATIO", "B/RECORD", "MB/s", "MB/s CPU",
              "EXPAND CPU");
  for (int level : levels) {
    const char* layout = std::getenv("SPOOR_BENCH_LAYOUT");
    spoor::compress::Packer packer(level, layout != nullptr ? static_cast<uint16_t>(std::atoi(layout))
                                                            : fmt::kLayoutWideRows);
    std::vector<uint8_t> payload;
    std::vector<std::vector<uint8_t>> payloads;  // each run's, for the expansion below
    uint64_t packed = sizeof(fmt::FileHeader);
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    for (std::span<const uint8_t> run : runs) {
      if (!packer.pack(run, payload, nullptr)) return 1;
      packed += sizeof(fmt::BlockHeader) + payload.size();
      payloads.push_back(payload);  // a copy: on the timing's account, as the recorder's write is
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu_seconds = thread_cpu_seconds() - cpu_start;
    // Expanding them again, as a reader does, into one reused buffer; every
    // run must come back exactly (compared outside the timing).
    spoor::compress::ExpandedBytes back;
    std::string problem;
    double expand_cpu_seconds = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      const double expand_start = thread_cpu_seconds();
      const bool expanded = spoor::compress::unpack(payloads[i], back, problem);
      expand_cpu_seconds += thread_cpu_seconds() - expand_start;
      if (!expanded || back.size() != runs[i].size() || !std::equal(back.begin(), back.end(), runs[i].begin())) {
        std::fprintf(stderr, "spoor_bench_compress: a run does not expand to its blocks: %s\n", problem.c_str());
        return 1;
      }
    }
    std::printf("%6d %12llu %7.2fx %10.2f %10.1f %10.1f %10.1f\n", level, static_cast<unsigned long long>(packed),
                static_cast<double>(file.size()) / static_cast<double>(packed),
                static_cast<double>(packed) / static_cast<double>(records),
                static_cast<double>(file.size()) / seconds / 1e6,
                static_cast<double>(file.size()) / cpu_seconds / 1e6,
                static_cast<double>(file.size()) / expand_cpu_seconds / 1e6);
  }
  return 0;
}
