// `spoor report ... --format json TRACE`, parsed, for the tests that check
// a report's figures against what a program did. Needs nlohmann_json.
#ifndef SPOOR_TEST_REPORT_JSON_H
#define SPOOR_TEST_REPORT_JSON_H

#include <nlohmann/json.hpp>
#include <string>

#include "run_command.h"

namespace spoor::test {

struct ReportJson {
  nlohmann::json report;  // the whole document
  std::string failure;    // empty when the report was read
};

// Runs `spoor report OPTIONS --format json TRACE`.
inline ReportJson report_json(const std::string& spoor, const std::string& options, const std::string& trace) {
  ReportJson r;
  const Process report = run(spoor + " report " + options + " --format json " + trace);
  if (report.status != 0) {
    r.failure = "spoor report exited with " + std::to_string(report.status) + ": " + report.err;
    return r;
  }
  r.report = nlohmann::json::parse(report.out, nullptr, false);
  if (r.report.is_discarded()) r.failure = "not JSON: " + report.out;
  return r;
}

}  // namespace spoor::test

#endif  // SPOOR_TEST_REPORT_JSON_H
