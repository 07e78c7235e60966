// Helpers the reader tests share: open built bytes, read all events.
#ifndef SPOOR_TESTS_TEST_SUPPORT_H
#define SPOOR_TESTS_TEST_SUPPORT_H

#include <gtest/gtest.h>

#include <vector>

#include "spoor/reader/reader.h"
#include "trace_builder.h"

namespace spoor::testing {

// Opens `bytes`, failing the test if they are not a trace.
inline reader::Trace open_ok(const Bytes& bytes) {
  reader::Result<reader::Trace> t = reader::Trace::from_bytes(bytes);
  EXPECT_TRUE(t.ok()) << t.error();
  if (!t.ok()) return reader::Trace::from_bytes(TraceBuilder().bytes()).value();
  return std::move(t).value();
}

struct ReadAll {
  std::vector<reader::Event> events;
  std::vector<reader::Damage> damages;
};

inline ReadAll read_all(const reader::Trace& trace) {
  ReadAll r;
  reader::EventReader events(trace);
  reader::Event e;
  while (events.next(e)) r.events.push_back(e);
  r.damages = events.damages();
  return r;
}

// Where the data of the PACKET block at `block_offset` starts.
inline uint64_t packet_data(size_t block_offset) {
  return block_offset + sizeof(format::BlockHeader) + sizeof(format::PacketBlock);
}

}  // namespace spoor::testing

#endif  // SPOOR_TESTS_TEST_SUPPORT_H
