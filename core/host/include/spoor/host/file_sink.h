// The trace file a session writes: small blocks are gathered in a buffer,
// packet data (tens of KiB) goes from the ring to the kernel with no copy.
// With compression on, every byte goes to a BlockCompressor instead, whose
// thread writes the COMPRESSED blocks.
#ifndef SPOOR_HOST_FILE_SINK_H
#define SPOOR_HOST_FILE_SINK_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spoor/host/block_compressor.h"
#include "spoor/trace_writer.h"

namespace spoor::host {

class FileSink {
 public:
  FileSink() = default;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  ~FileSink();

  // Creates (truncates) `path`; "-" writes to standard output. Returns
  // false with *error set.
  bool open(const std::string& path, std::string* error);
  // Compresses everything written from now on (call right after open(),
  // before the file header); does nothing unless options.enabled. Where
  // no packing thread can start, the file is written uncompressed and
  // compression_problem() says why; where only some can, they pack.
  void compress(const CompressionOptions& options);
  // "" when compression runs as asked; else what it could not do, for the
  // user ("0 of 2 packing threads started (Resource temporarily
  // unavailable): the trace is written uncompressed").
  const std::string& compression_problem() const { return compression_problem_; }
  // Sends buffered bytes to the kernel. Returns false on a write error.
  // Compressing: hands complete blocks to the packing threads once they
  // waited max_delay_ms (they reach the kernel when packed).
  bool flush();
  // Compressing: lets up to `threads` runs be packed at once from now on
  // (BlockCompressor::use_threads).
  void pack_threads(uint32_t threads);
  // Compressing: the next run buffers are made ahead of the writer
  // (BlockCompressor::make_spares_ahead).
  void make_spares_ahead();
  // Flushes and closes. Returns false if any write failed.
  bool close();
  // The errno of the first failed write, 0 if none. Nothing is written
  // after it.
  int error_number() const { return errno_.load(); }
  // Bytes handed to the kernel so far: the file's size once closed (after
  // a failed write, where the file ends).
  uint64_t bytes_written() const { return written_.load(); }
  // What compression did; complete after close().
  CompressionStats compression_stats() const { return compression_; }

  // The sink for TraceWriter.
  Sink sink() { return Sink{this, &FileSink::write_thunk}; }

 private:
  static bool write_thunk(void* self, const void* data, size_t size);
  bool write(const void* data, size_t size);
  bool write_all(const void* data, size_t size);

  int fd_ = -1;
  // Set by the packing threads too, when compressing.
  std::atomic<int> errno_{0};
  std::atomic<uint64_t> written_{0};
  std::vector<uint8_t> buffer_;
  std::unique_ptr<BlockCompressor> compressor_;
  CompressionStats compression_;
  std::string compression_problem_;
};

}  // namespace spoor::host

#endif  // SPOOR_HOST_FILE_SINK_H
