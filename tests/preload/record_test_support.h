// What the spoor record end-to-end tests share (record_test.cpp and the
// record_*_test.cpp beside it): where their traces go, the tool, and a
// trace read back as the heap calls and the processes it holds.
#ifndef SPOOR_TESTS_PRELOAD_RECORD_TEST_SUPPORT_H
#define SPOOR_TESTS_PRELOAD_RECORD_TEST_SUPPORT_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace spoor::test::record {

namespace reader = spoor::reader;

inline std::string trace_path(const std::string& name) { return spoor::test::temp_path("rec-" + name + ".spoor"); }

// A Stack event's frames: 64-bit return addresses, innermost first.
inline std::vector<uint64_t> stack_frames(const reader::Event& e) {
  const auto blob = std::get<reader::Blob>(*e.field("frames")).bytes;
  std::vector<uint64_t> frames(blob.size() / 8);
  std::memcpy(frames.data(), blob.data(), frames.size() * 8);
  return frames;
}

struct HeapCounts {
  std::map<std::string, uint64_t> calls;  // by event name
  uint64_t alloc_bytes = 0;
  uint64_t events = 0;
  std::vector<uint64_t> exit_signals;  // of the ProcessExit events, in order
};

inline HeapCounts count_heap(const std::string& path) {
  HeapCounts c;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return c;
  EXPECT_FALSE(trace->damage());
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    ++c.events;
    c.calls[e.descriptor->name]++;
    if (e.descriptor->name == "Alloc") c.alloc_bytes += std::get<uint64_t>(*e.field("size"));
    if (e.descriptor->name == "ProcessExit") c.exit_signals.push_back(std::get<uint64_t>(*e.field("signal")));
  }
  return c;
}

inline const std::string kSpoor = SPOOR_TOOL;

// The processes of the traced tree: every one but spoor record itself
// (which writes the ProcessExit events of the processes it reaps).
inline std::vector<const reader::Process*> traced_processes(const reader::Trace& trace) {
  std::vector<const reader::Process*> out;
  for (const reader::Process& p : trace.processes())
    if (!(p.arguments.size() == 2 && p.arguments[0] == "spoor" && p.arguments[1] == "record")) out.push_back(&p);
  return out;
}

}  // namespace spoor::test::record

#endif  // SPOOR_TESTS_PRELOAD_RECORD_TEST_SUPPORT_H
