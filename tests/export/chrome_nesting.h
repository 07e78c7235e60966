// The rule Chrome JSON viewers hold B/E events to: per thread, every E
// ends the innermost open B, time never goes back, nothing stays open.
#ifndef SPOOR_TESTS_EXPORT_CHROME_NESTING_H
#define SPOOR_TESTS_EXPORT_CHROME_NESTING_H

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spoor::test {

// Fails the test where the rule breaks; returns the slice names in the
// order they begin, per (pid, tid).
inline std::map<std::pair<int, int>, std::vector<std::string>> check_nesting(const nlohmann::json& events) {
  std::map<std::pair<int, int>, std::vector<std::string>> open, begun;
  std::map<std::pair<int, int>, double> last_ts;
  for (const nlohmann::json& e : events) {
    const std::string ph = e.at("ph");
    if (ph != "B" && ph != "E") continue;
    const std::pair<int, int> thread{e.at("pid").get<int>(), e.at("tid").get<int>()};
    const double ts = e.at("ts");
    EXPECT_GE(ts, last_ts[thread]) << "events of a thread go forward in time: " << e;
    last_ts[thread] = ts;
    if (ph == "B") {
      open[thread].push_back(e.at("name"));
      begun[thread].push_back(e.at("name"));
    } else {
      EXPECT_FALSE(open[thread].empty()) << "an E without its B: " << e;
      if (open[thread].empty()) continue;
      EXPECT_EQ(open[thread].back(), e.at("name").get<std::string>()) << "ends the innermost slice";
      open[thread].pop_back();
    }
  }
  for (const auto& [thread, names] : open) EXPECT_TRUE(names.empty()) << "unclosed slice on tid " << thread.second;
  return begun;
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_EXPORT_CHROME_NESTING_H
