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
