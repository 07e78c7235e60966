// Loading a hand-built trace with the analyses under test riding along.
#ifndef SPOOR_TESTS_ANALYSIS_TEST_SUPPORT_H
#define SPOOR_TESTS_ANALYSIS_TEST_SUPPORT_H

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "spoor/analysis/load.h"
#include "spoor/reader/trace.h"
#include "spoor_trace.h"

namespace spoor::testing {

struct Loaded {
  std::unique_ptr<reader::Trace> trace;
  analysis::TraceModel model;
};

inline Loaded load(SpoorTrace& t, std::vector<analysis::EventVisitor*> visitors = {}) {
  Loaded l;
  auto trace = reader::Trace::from_bytes(t.bytes());
  EXPECT_TRUE(trace) << trace.error();
  l.trace = std::make_unique<reader::Trace>(std::move(trace).value());
  l.model = analysis::load_trace(*l.trace, visitors);
  return l;
}

}  // namespace spoor::testing

#endif  // SPOOR_TESTS_ANALYSIS_TEST_SUPPORT_H
