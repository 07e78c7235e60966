// The I/O section of `spoor report --io --top 100 --format json TRACE`, one
// row per file, for the tests that check the report's counts against what
// a program did. Needs nlohmann_json.
#ifndef SPOOR_TEST_IO_REPORT_ROWS_H
#define SPOOR_TEST_IO_REPORT_ROWS_H

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "event_fields.h"
#include "report_json.h"

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
  ReportJson r = report_json(spoor, "--io --top 100", trace);
  rows.failure = std::move(r.failure);
  if (!rows.failure.empty()) return rows;
  rows.report = std::move(r.report);
  for (const auto& f : rows.report["io"]["files"]) {
    const std::string path = f["path"].get<std::string>();
    rows.files[base_names ? fields::base_name(path) : path] = f;
  }
  return rows;
}

}  // namespace spoor::test

#endif  // SPOOR_TEST_IO_REPORT_ROWS_H
