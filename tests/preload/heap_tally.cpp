#include "heap_tally.h"

#include <variant>

#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace spoor::test {

namespace reader = spoor::reader;

namespace {

uint64_t address(const reader::Event& e, const char* field) {
  return std::get<reader::Pointer>(*e.field(field)).address;
}

uint64_t number(const reader::Event& e, const char* field) { return std::get<uint64_t>(*e.field(field)); }

}  // namespace

HeapTally tally_heap(const std::string& trace_path) {
  HeapTally t;
  auto trace = reader::Trace::open(trace_path);
  if (!trace) {
    t.error = trace.error();
    return t;
  }
  t.damaged = trace->damage().has_value();
  reader::EventReader events(trace.value());
  reader::Event e;
  // Events come in time order across the per-CPU streams, so a block's
  // free follows its allocation even when the thread changed CPU between.
  // A free of a block allocated before the shim attached finds nothing.
  while (events.next(e)) {
    if (e.provider->name != "Spoor.Heap") continue;
    const std::string& name = e.descriptor->name;
    if (name == "Alloc") {
      const uint64_t size = number(e, "size");
      t.allocations[size]++;
      t.live[address(e, "ptr")] = size;
    } else if (name == "Realloc") {
      const uint64_t old = address(e, "old_ptr");
      const uint64_t ptr = address(e, "ptr");
      if (old != 0) t.live.erase(old);
      if (ptr != 0) {
        const uint64_t size = number(e, "size");
        t.allocations[size]++;
        t.live[ptr] = size;
      }
    } else if (name == "Free") {
      t.live.erase(address(e, "ptr"));
    }
  }
  return t;
}

SizeCounts in_band(const SizeCounts& counts, uint64_t low, uint64_t high) {
  return SizeCounts(counts.lower_bound(low), counts.lower_bound(high));
}

SizeCounts sizes_of(const std::map<uint64_t, uint64_t>& live) {
  SizeCounts s;
  for (const auto& [ptr, size] : live) s[size]++;
  return s;
}

uint64_t total_blocks(const SizeCounts& counts) {
  uint64_t n = 0;
  for (const auto& [size, count] : counts) n += count;
  return n;
}

uint64_t total_bytes(const SizeCounts& counts) {
  uint64_t n = 0;
  for (const auto& [size, count] : counts) n += size * count;
  return n;
}

}  // namespace spoor::test
