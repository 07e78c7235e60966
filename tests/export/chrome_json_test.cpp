// Chrome JSON read back with a JSON parser: names, B/E nesting per thread,
// instants, counters.
#include "spoor/export/chrome_json.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "chrome_nesting.h"
#include "known_model.h"

namespace {

using nlohmann::json;
using namespace spoor::exporter;

TEST(ChromeJson, SlicesNestPerThreadAndOverlapsGoToALaneThread) {
  const json doc = json::parse(chrome_trace_json(spoor::test::known_model()));
  const json& events = doc.at("traceEvents");
  const auto begun = spoor::test::check_nesting(events);
  EXPECT_EQ(begun.at({100, 100}), (std::vector<std::string>{"outer", "read", "write"}));
  EXPECT_EQ(begun.at({100, 101}), (std::vector<std::string>{"read"}));
  EXPECT_EQ(begun.at({100, 0x40000000}), (std::vector<std::string>{"overlap"}));
}

TEST(ChromeJson, TimesAreMicrosecondsAndArgumentsKept) {
  const json doc = json::parse(chrome_trace_json(spoor::test::known_model()));
  bool found = false;
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == "B" && e.at("name") == "read" && e.at("tid") == 100) {
      found = true;
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 2.0);
      EXPECT_EQ(e.at("cat"), "io");
      EXPECT_EQ(e.at("args").at("fd"), "3");
      EXPECT_EQ(e.at("args").at("bytes"), "4096");
    }
  EXPECT_TRUE(found);
}

// A wakeup: thread 101's mark at 5 us flows into thread 100's at 7 us. The
// ids are on the slices' begin events (the format's flow version 2), so the
// arrow binds to exactly those slices.
TEST(ChromeJson, AFlowLinksTheBeginEventsOfItsTwoSlices) {
  ExportModel m;
  m.slices.push_back({.pid = 100, .tid = 101, .begin_ns = 5000, .end_ns = 5000, .name = "wakes", .category = "sched",
                      .args = {}});
  m.slices.push_back({.pid = 100, .tid = 100, .begin_ns = 7000, .end_ns = 7000, .name = "runs", .category = "sched",
                      .args = {}});
  m.flows.push_back({.from = 0, .to = 1});
  const json doc = json::parse(chrome_trace_json(m));
  std::vector<json> out, in;
  for (const json& e : doc.at("traceEvents")) {
    if (e.value("flow_out", false)) out.push_back(e);
    if (e.value("flow_in", false)) in.push_back(e);
  }
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(out[0].at("ph"), "B");
  EXPECT_EQ(out[0].at("tid"), 101);
  EXPECT_DOUBLE_EQ(out[0].at("ts").get<double>(), 5.0);
  EXPECT_EQ(in[0].at("ph"), "B");
  EXPECT_EQ(in[0].at("tid"), 100);
  EXPECT_DOUBLE_EQ(in[0].at("ts").get<double>(), 7.0);
  EXPECT_EQ(out[0].at("bind_id"), in[0].at("bind_id"));
  EXPECT_FALSE(in[0].contains("flow_out"));
}

TEST(ChromeJson, NamesInstantsAndCounters) {
  const json doc = json::parse(chrome_trace_json(spoor::test::known_model()));
  std::map<std::string, std::vector<json>> by_phase;
  for (const json& e : doc.at("traceEvents")) by_phase[e.at("ph")].push_back(e);
  std::map<std::string, std::string> names;  // "process_name 100" -> "app"
  for (const json& m : by_phase["M"])
    names[m.at("name").get<std::string>() + " " + std::to_string(m.at("tid").get<int>())] = m.at("args").at("name");
  EXPECT_EQ(names["process_name 100"], "app");
  EXPECT_EQ(names["thread_name 101"], "worker");
  EXPECT_EQ(names["thread_name " + std::to_string(0x40000000)], "app (overlapping 1)");
  ASSERT_EQ(by_phase["i"].size(), 1u);
  EXPECT_EQ(by_phase["i"][0].at("name"), "fork");
  EXPECT_DOUBLE_EQ(by_phase["i"][0].at("ts").get<double>(), 6.0);
  ASSERT_EQ(by_phase["C"].size(), 2u);
  EXPECT_EQ(by_phase["C"][1].at("name"), "heap size");
  EXPECT_EQ(by_phase["C"][1].at("args").at("bytes"), 2148);
}

TEST(ChromeJson, NamesThatAreNotUtf8DoNotBreakTheDocument) {
  ExportModel m = spoor::test::known_model();
  m.slices[0].name = "bad \xff name";
  EXPECT_NO_THROW(json::parse(chrome_trace_json(m)));
}

}  // namespace
