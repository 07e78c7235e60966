// Compressing a trace as it is written: the bytes a TraceWriter produces
// (file header, then blocks) are gathered into runs of complete blocks and
// each run becomes one COMPRESSED block (docs/FORMAT.md), packed on
// threads of their own so that the drainer only copies: a drain loop racing
// a busy program is never held up by zstd. Runs are independent, so several
// are packed at once (up to `threads`, as use_threads() allows); they are
// written in the order they were cut, whichever finishes first.
//
// If packing falls behind by more than half of `backlog_limit` bytes, runs
// are packed at zstd's fastest level; beyond `backlog_limit`, written as
// they are (uncompressed, still valid) until it catches up, as long as the
// file keeps up. Runs waiting to be packed or written hold at most 1.5x
// `backlog_limit`: past that, write() waits (the drainer leaves the rings
// to fill, and their losses are counted).
#ifndef SPOOR_HOST_BLOCK_COMPRESSOR_H
#define SPOOR_HOST_BLOCK_COMPRESSOR_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace spoor::host {

struct CompressionOptions {
  bool enabled = false;
  int level = 3;                        // zstd level (1..19): 3 packs ~1.8x faster than 6 for ~5% more bytes
  int behind_level = 1;                 // for a run a packing thread found waiting when it came
                                        // for work (the program outran the packing): zstd's part
                                        // ~30-45% faster than at 3, heap traces ~1% smaller,
                                        // others 6-11% larger; `level` for one level throughout
  size_t run_bytes = 8u << 20;          // blocks gathered per COMPRESSED block: 8 MiB packs a heap
                                        // trace 0.7% larger than 16 MiB and 2% smaller than 4 MiB
                                        // (more values are seen before), and a short recording
                                        // ends ~10% sooner than with 16 MiB (less left to pack
                                        // when the program ends, half the fresh memory)
  uint32_t max_delay_ms = 500;          // flush() packs a shorter run after this long
  size_t backlog_limit = 256u << 20;    // runs waiting beyond this are stored as they are
                                        // (beyond half of it, packed at level 1); write()
                                        // waits while 1.5x this (at least 4 runs) waits
  uint32_t threads = 0;                 // packing threads; 0: one per CPU, at most 8 (each
                                        // keeps 10-20 MiB of scratch for 8 MiB runs)
  uint32_t threads_at_first = 0;        // of those, how many may pack at once until
                                        // use_threads() says otherwise; 0: half the CPUs, at
                                        // least 1 (the rest are the traced program's)
};

struct CompressionStats {
  uint64_t raw_bytes = 0;      // bytes of blocks that went into COMPRESSED blocks
  uint64_t packed_bytes = 0;   // the COMPRESSED blocks written for them, headers included
  uint64_t blocks = 0;         // COMPRESSED blocks written
  uint64_t fast_bytes = 0;     // of raw_bytes, packed at level 1 (backlog over half the limit)
  uint64_t behind_bytes = 0;   // of raw_bytes, packed in the same layout at behind_level:
                               // runs found waiting by the thread that packed them
  uint64_t stored_bytes = 0;   // bytes written uncompressed (backlog over the limit, packing failed)
  double cpu_seconds = 0;      // CPU time of the packing threads, together
  double drain_wait_seconds = 0;  // time write() waited for runs to be written
  uint64_t memory_limit = 0;      // the most runs waiting may hold before write() waits
  uint32_t threads = 0;        // packing threads that packed at least one run
  uint64_t spares_made = 0;    // run buffers packing threads made ahead for the drainer, pages touched
  uint64_t runs_gathered_fresh = 0;  // runs the drainer gathered in a buffer it had to get itself
  uint64_t spares_ready = 0;   // buffers waiting for the drainer's next runs now
};

class BlockCompressor {
 public:
  // Receives the compressed trace, in order, on one packing thread at a
  // time.
  // Returns false when the bytes could not be written (nothing more is
  // written after that).
  using Output = std::function<bool(const void* data, size_t size)>;

  BlockCompressor(const CompressionOptions& options, Output output);
  ~BlockCompressor();  // finish()
  // False when no packing thread could start: nothing written to it would
  // ever be packed or written. start_problem() says how many started and
  // why the next could not ("1 of 2 packing threads started (Resource
  // temporarily unavailable)"), "" when every one did.
  bool running() const;
  std::string start_problem() const;
  BlockCompressor(const BlockCompressor&) = delete;
  BlockCompressor& operator=(const BlockCompressor&) = delete;

  // Takes the next bytes of the trace: one memcpy into the current run's
  // buffer; a full run is handed over as it is (its buffer moves to the
  // packing threads, which give it back for reuse once written).
  void write(const void* data, size_t size);
  // Hands the complete blocks over if they waited max_delay_ms or more.
  void flush();
  // From now on, a packing thread with nothing to pack touches the pages
  // of the next buffer write() will gather a run in, so that write() takes
  // no page faults: for a drainer that fell behind its rings. Idempotent.
  void make_spares_ahead();
  // From now on up to `threads` runs may be packed at once (at least 1, at
  // most options.threads): say, every CPU once the traced program ended.
  void use_threads(uint32_t threads);
  // Hands everything over, waits until it is written and stops the thread.
  // Returns false if the output failed. Idempotent.
  bool finish();
  // Complete after finish().
  CompressionStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace spoor::host

#endif  // SPOOR_HOST_BLOCK_COMPRESSOR_H
