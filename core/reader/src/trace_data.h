// Trace::Data: what opening a trace found. Built once by walk_blocks() and
// never changed after, so pointers into its deques and vectors stay valid.
#ifndef SPOOR_READER_TRACE_DATA_H
#define SPOOR_READER_TRACE_DATA_H

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "mapped_file.h"
#include "spoor/reader/model.h"
#include "spoor/reader/trace.h"

namespace spoor::reader {

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
  // Deques: the block walk hands out pointers while still appending.
  std::deque<Provider> providers;
  std::unordered_map<uint64_t, const Provider*> provider_by_key;
  std::deque<EventDescriptor> events;
  std::unordered_map<uint64_t, const EventDescriptor*> event_by_key;

  // What COMPRESSED blocks expanded to: packets' records point in here.
  std::deque<std::vector<uint8_t>> expanded;
  CompressionSummary compression;

  std::optional<Damage> damage;
  std::vector<std::string> warnings;
};

// Checks the file header (magic, size, major version) and walks every block
// into `data`, stopping at the first bad one (data.damage). Fails only when
// the bytes are not a readable trace at all: then it returns the problem.
std::optional<Error> walk_blocks(Trace::Data& data);

}  // namespace spoor::reader

#endif  // SPOOR_READER_TRACE_DATA_H
