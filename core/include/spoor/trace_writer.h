// Serializes a trace (docs/FORMAT.md) into a sink: the file header, clock,
// process, stream and metadata blocks, drained packets. No heap, no buffer:
// each block is checksummed in one pass over its pieces and then written
// piece by piece, so firmware can stream straight to a UART or semihosting.
#ifndef SPOOR_TRACE_WRITER_H
#define SPOOR_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/crc32c.h"
#include "spoor/format.h"
#include "spoor/ring.h"
#include "spoor/status.h"

namespace spoor {

// The output sink: the fourth part of the platform contract. write() returns
// true when all `size` bytes were taken.
struct Sink {
  void* context;
  bool (*write)(void* context, const void* data, size_t size);
};

class TraceWriter {
 public:
  explicit TraceWriter(Sink sink) : sink_(sink) {}

  // Each returns ok or sink_failed.
  Status file_header();
  Status clock(const format::ClockBlock& clock);
  // cmdline: arguments separated by NUL bytes, cmdline_size bytes in all.
  Status process(uint32_t pid, uint32_t ppid, const char* name, const char* cmdline,
                 size_t cmdline_size);
  Status stream(uint32_t stream_id, uint32_t pid, uint32_t cpu);
  // Writes PROVIDER and EVENT blocks for everything registered since the
  // last call, attributed to `pid`. Call before writing packets that might
  // use new events (a record's commit happens after its event's
  // registration, so draining first and describing second is enough).
  Status new_metadata(uint32_t pid);
  Status packet(uint32_t stream_id, const Packet& packet);
  Status stream_end(uint32_t stream_id, uint64_t lost_total, uint64_t abandoned_bytes,
                    uint64_t packets);
  // One SYMBOL_MAP block: `size` bytes of a symbol map's text from
  // `offset` on; path_size is at most 65535.
  Status symbol_map(uint32_t pid, format::SymbolMapKind kind, const char* path, size_t path_size,
                    uint64_t offset, const void* data, size_t size);

  // Bytes written so far.
  uint64_t bytes_written() const { return bytes_; }

  struct Piece {
    const void* data;
    size_t size;
  };
  // Writes one block made of `count` pieces. Returns ok or sink_failed.
  Status block(uint16_t type, const Piece* pieces, size_t count);

  // Writes one block whose pieces `each(put)` produces by calling
  // put(data, size) for each piece, in order. `each` runs twice (checksum,
  // then write), so it needs no buffer. Returns ok or sink_failed.
  template <class Each>
  Status block_from(uint16_t type, Each each) {
    size_t size = 0;
    each([&](const void*, size_t n) { size += n; });
    format::BlockHeader h = block_header(type, size);
    uint32_t crc = block_checksum_start(&h);
    each([&](const void* data, size_t n) { crc = crc32c(crc, data, n); });
    h.crc32c = crc;
    Status result = put(&h, sizeof h);
    each([&](const void* data, size_t n) {
      if (result == Status::ok) result = put(data, n);
    });
    return result;
  }

 private:
  Status put(const void* data, size_t size);
  static format::BlockHeader block_header(uint16_t type, size_t size);

  Sink sink_;
  uint64_t bytes_ = 0;
  uint32_t providers_described_ = 0;  // providers 1..n already written
  uint32_t events_described_ = 0;     // event keys 1..n already written (or skipped)
};

}  // namespace spoor

#endif  // SPOOR_TRACE_WRITER_H
