// The I/O section of `spoor report --io --top 100 --format json TRACE`, one
// row per file, for the tests that check the report's counts against what
// a program did. Needs nlohmann_json.
#ifndef SPOOR_TEST_IO_REPORT_ROWS_H
#define SPOOR_TEST_IO_REPORT_ROWS_H

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "event_fields.h"
#include "run_command.h"

namespace spoor::test {

struct IoReportRows {
  nlohmann::json report;                        // the whole document
  std::map<std::string, nlohmann::json> files;  // by path, or by base name
  std::string failure;                          // empty when the report was read
};

// Reports `trace` with `spoor` and keys each file's row by its path, or by
// its base name when `base_names` (a test's files in a temporary directory).
inline IoReportRows io_report_rows(const std::string& spoor, const std::string& trace, bool base_names) {
  IoReportRows rows;
  const Process report = run(spoor + " report --io --top 100 --format json " + trace);
  if (report.status != 0) {
    rows.failure = "spoor report exited with " + std::to_string(report.status) + ": " + report.err;
    return rows;
  }
  rows.report = nlohmann::json::parse(report.out, nullptr, false);
  if (rows.report.is_discarded()) {
    rows.failure = "not JSON: " + report.out;
    return rows;
  }
  for (const auto& f : rows.report["io"]["files"]) {
    const std::string path = f["path"].get<std::string>();
    rows.files[base_names ? fields::base_name(path) : path] = f;
  }
  return rows;
}

}  // namespace spoor::test

#endif  // SPOOR_TEST_IO_REPORT_ROWS_H
