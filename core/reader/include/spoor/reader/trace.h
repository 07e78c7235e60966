// spoor::reader::Trace: an opened trace file and everything its blocks
// describe. Opening checks every block (sync word, size, CRC-32C, layout);
// records are decoded later, on demand, by EventReader.
#ifndef SPOOR_READER_TRACE_H
#define SPOOR_READER_TRACE_H

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spoor/reader/model.h"
#include "spoor/reader/result.h"

namespace spoor::reader {

class Trace {
 public:
  // Maps the file read-only (or reads it, for pipes and other non-regular
  // files) and walks its blocks. Fails, with a message naming the problem,
  // when the file cannot be read, is not a Spoor trace (wrong magic, shorter
  // than the 32-byte header) or has another major version. A damaged file
  // is not a failure: damage() says where the readable part ends.
  // The file must not shrink while the Trace lives (the mapping would fault).
  static Result<Trace> open(const std::string& path);

  // The same, over bytes already in memory (tests, network input).
  static Result<Trace> from_bytes(std::vector<uint8_t> bytes);

  Trace(Trace&&) noexcept;
  Trace& operator=(Trace&&) noexcept;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
  ~Trace();

  // The whole file. Events' strings and blobs point into it, or into what
  // a COMPRESSED block expanded to (see limit_expanded_bytes).
  std::span<const uint8_t> bytes() const;
  uint64_t file_size() const { return bytes().size(); }
  uint16_t version_major() const;
  uint16_t version_minor() const;

  // The last valid CLOCK block, or ticks-are-nanoseconds when there is none
  // (has_clock() false; warnings() says so).
  const Clock& clock() const;
  bool has_clock() const;

  // In file order. Pointers returned here stay valid as long as the Trace.
  const std::vector<Process>& processes() const;
  const std::vector<Stream>& streams() const;
  const std::deque<Provider>& providers() const;
  const std::deque<EventDescriptor>& events() const;

  // Every PROCESS block, in file order: a process announced again (each
  // traced exec announces its new image) has one per announcement, where
  // processes() keeps the last.
  const std::vector<Process>& process_blocks() const;

  // Symbol maps the recorder kept (format 1.4), one per pid: the last one
  // a pid started.
  const std::vector<SymbolMap>& symbol_maps() const;

  // nullptr when the file has no such thing.
  const Process* process(uint32_t pid) const;
  const SymbolMap* symbol_map(uint32_t pid) const;
  const Stream* stream(uint32_t stream_id) const;
  const Provider* provider(uint32_t pid, uint16_t index) const;
  const EventDescriptor* event(uint32_t pid, uint16_t key) const;

  // COMPRESSED blocks read (all zero for a file without any).
  const CompressionSummary& compression() const;

  // Opening reads each COMPRESSED block's headers only; readers expand a
  // block when they reach its packets. By default every expansion stays
  // until the Trace goes, so events' strings and blobs live as long as the
  // Trace, and memory grows with the trace (about 12x its compressed size).
  // With a limit, the Trace keeps only the latest expansions within `bytes`
  // besides those its readers are in (a block read again is expanded
  // again): memory then stays bounded whatever the trace's length, and an
  // event's strings and blobs stay valid only until the next call to
  // EventReader::next. Call before reading.
  void limit_expanded_bytes(uint64_t bytes);
  struct ExpansionStats {
    uint64_t expansions = 0;  // COMPRESSED blocks expanded, again included
    uint64_t peak_bytes = 0;  // the most expanded bytes held at once
    uint64_t by_readers = 0;  // of the expansions, those a reader made itself (not ready ahead)
  };
  ExpansionStats expansion_stats() const;

  // The first block that failed its checks, if any; nothing from it onwards
  // was used.
  const std::optional<Damage>& damage() const;

  // Things that did not stop the reading but a user may want to know:
  // skipped unknown block types, invalid CLOCK blocks, a missing PROCESS.
  const std::vector<std::string>& warnings() const;

  struct Data;  // defined in src/trace_data.h

 private:
  friend class StreamDecoder;  // expands the blocks its packets are in
  explicit Trace(std::unique_ptr<Data> data);
  std::unique_ptr<Data> data_;
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_TRACE_H
