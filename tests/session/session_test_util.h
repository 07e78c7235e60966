// Helpers for end-to-end tests: a temporary trace path and reading every
// event of a trace back.
#ifndef SPOOR_TESTS_SESSION_TEST_UTIL_H
#define SPOOR_TESTS_SESSION_TEST_UTIL_H

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "spoor/reader/event_reader.h"
#include "temp_dir.h"
#include "spoor/reader/trace.h"

namespace spoor::test {

inline std::string temp_trace_path(const std::string& name) { return test_temp_path(name + ".spoor"); }

// Reads every event of the trace (fields copied out, since Event views die
// with the reader's reuse of `out`).
struct ReadBack {
  std::vector<reader::Event> events;
  uint64_t damages = 0;
};

inline ReadBack read_all(const reader::Trace& trace) {
  ReadBack out;
  reader::EventReader r(trace);
  reader::Event e;
  while (r.next(e)) out.events.push_back(e);
  out.damages = r.damages().size();
  return out;
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_SESSION_TEST_UTIL_H
