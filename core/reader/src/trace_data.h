// Trace::Data: what opening a trace found. Built once by walk_blocks() and
// never changed after, so pointers into its deques and vectors stay valid;
// only the expansions of COMPRESSED blocks come and go as readers need them.
#ifndef SPOOR_READER_TRACE_DATA_H
#define SPOOR_READER_TRACE_DATA_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "mapped_file.h"
#include "spoor/compress/huge_pages.h"
#include "spoor/reader/model.h"
#include "spoor/reader/trace.h"

namespace spoor::reader {

// What one COMPRESSED block expanded to, and what expanding it found wrong.
struct Expansion {
  compress::ExpandedBytes bytes;
  std::string problem;  // why it could not be expanded (bytes then empty)
  // Offsets (in `bytes`) of the PACKET blocks whose CRC-32C does not match,
  // ascending: opening checked only their headers.
  std::vector<uint64_t> bad_packets;
  bool bad(uint64_t block_at) const;
};

// Buffers of expansions no one holds any more, for the next ones: shared
// with each expansion's deleter, so it lives as long as the last of them.
struct SpareBuffers {
  std::mutex mutex;
  std::vector<compress::ExpandedBytes> buffers;
  static constexpr size_t kMost = 2;  // the reader's and the worker's next

  compress::ExpandedBytes take();
  void give(compress::ExpandedBytes&& buffer);
};

// The expansions a Trace keeps besides those its readers hold (each stream
// decoder holds the one its current packet is in), while their bytes are
// within `limit`: past it, the one whose packets a reader in time order
// is done with soonest goes first.
struct ExpansionCache {
  ExpansionCache() = default;
  ExpansionCache(const ExpansionCache&) = delete;
  ExpansionCache& operator=(const ExpansionCache&) = delete;
  ~ExpansionCache();  // stops the worker

  std::mutex mutex;  // readers of one Trace may run on several threads
  struct Kept {
    uint32_t container = 0;
    std::shared_ptr<const Expansion> expansion;
  };
  std::vector<Kept> kept;
  uint64_t kept_bytes = 0;
  uint64_t limit = UINT64_MAX;
  uint64_t peak_bytes = 0;  // the most held at once, by anyone
  uint64_t expansions = 0;  // blocks expanded, again included
  uint64_t by_readers = 0;  // of them, expanded by a reader that asked (not ahead)
  std::vector<uint8_t> scratch_section;  // opening's, reused block to block
  compress::ExpandedBytes scratch_frame;  // zstd's output while expanding, reused
  std::shared_ptr<SpareBuffers> spare = std::make_shared<SpareBuffers>();

  // The worker expanding the next container ahead (expansion.cpp), on a
  // machine with more than one CPU.
  bool prefetch_enabled = std::thread::hardware_concurrency() > 1;
  std::thread worker;
  std::condition_variable work;  // the worker waits for `prefetching`
  std::condition_variable done;  // a reader waits for the worker's result
  uint32_t prefetching = kNoContainer;
  std::shared_ptr<const Expansion> prefetched;
  uint32_t prefetched_index = kNoContainer;
  bool stopping = false;
  // What the worker expands next: the containers in the order a reader in
  // time order first needs them (by their packets' earliest begin time),
  // made at the first expansion; the first not asked for yet goes next.
  std::vector<uint32_t> need_order;
  std::vector<bool> asked;
  size_t need_cursor = 0;
  // Each container's latest packet begin time: when a reader in time order
  // last enters one of its packets. `kept` drops the earliest first.
  std::vector<uint64_t> last_need;
};

// Per-process keys: pid in the high half, the provider index or event key in
// the low half.
inline uint64_t process_key(uint32_t pid, uint16_t k) {
  return (static_cast<uint64_t>(pid) << 32) | k;
}

struct Trace::Data {
  MappedFile file;             // when opened from a path
  std::vector<uint8_t> owned;  // when opened from bytes
  std::span<const uint8_t> bytes;

  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  Clock clock;
  bool has_clock = false;

  std::vector<Process> processes;
  std::vector<Process> process_blocks;  // every PROCESS block, announcements again included
  std::unordered_map<uint32_t, size_t> process_by_pid;
  std::vector<Stream> streams;
  std::unordered_map<uint32_t, size_t> stream_by_id;
  std::vector<SymbolMap> symbol_maps;
  std::unordered_map<uint32_t, size_t> symbol_map_by_pid;
  // Deques: the block walk hands out pointers while still appending.
  std::deque<Provider> providers;
  std::unordered_map<uint64_t, const Provider*> provider_by_key;
  std::deque<EventDescriptor> events;
  std::unordered_map<uint64_t, const EventDescriptor*> event_by_key;

  // The COMPRESSED blocks, in file order; Packet::container indexes them.
  // Opening reads only their block sections (compress::BlockSection); a
  // block is expanded when a reader reaches one of its packets, and kept
  // as `expansions` says.
  struct Container {
    std::span<const uint8_t> payload;  // in `bytes`
    uint64_t offset = 0;               // of the COMPRESSED block in the file
    uint32_t raw_size = 0;
    mutable std::weak_ptr<const Expansion> live;  // while a reader or `kept` holds it
  };
  std::vector<Container> containers;
  mutable ExpansionCache expansions;
  CompressionSummary compression;

  std::optional<Damage> damage;
  std::vector<std::string> warnings;
};

// The expansion of container `index` (Trace::Data::containers): the live
// one if anything holds it, else a new one. Never null.
std::shared_ptr<const Expansion> expand_container(const Trace::Data& data, uint32_t index);

// Checks the file header (magic, size, major version) and walks every block
// into `data`, stopping at the first bad one (data.damage). Fails only when
// the bytes are not a readable trace at all: then it returns the problem.
std::optional<Error> walk_blocks(Trace::Data& data);

}  // namespace spoor::reader

#endif  // SPOOR_READER_TRACE_DATA_H
