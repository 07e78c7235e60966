// The text form of `spoor report`, printed from its JSON document.
#ifndef SPOOR_CLI_REPORT_TEXT_H
#define SPOOR_CLI_REPORT_TEXT_H

#include <string>

#include <nlohmann/json.hpp>

namespace spoor::cli {

void print_report_text(const nlohmann::json& report, std::string& out);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_REPORT_TEXT_H
