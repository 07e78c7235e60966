// Helpers for end-to-end tests: a temporary trace path and reading every
// event of a trace back.
#ifndef SPOOR_TESTS_SESSION_TEST_UTIL_H
#define SPOOR_TESTS_SESSION_TEST_UTIL_H

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace spoor::test {

// This test process's directory of traces, removed when the process ends
// (by the process that made it: a fork child's exit leaves it alone).
class TempTraceDir {
 public:
  TempTraceDir()
      : owner_(getpid()),
        path_(std::filesystem::temp_directory_path() / ("spoor-test-" + std::to_string(owner_))) {}
  ~TempTraceDir() {
    std::error_code ignored;
    if (getpid() == owner_) std::filesystem::remove_all(path_, ignored);
  }
  TempTraceDir(const TempTraceDir&) = delete;
  TempTraceDir& operator=(const TempTraceDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  pid_t owner_;
  std::filesystem::path path_;
};

inline std::string temp_trace_path(const std::string& name) {
  static TempTraceDir dir;
  std::filesystem::create_directories(dir.path());
  return (dir.path() / (name + ".spoor")).string();
}

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
