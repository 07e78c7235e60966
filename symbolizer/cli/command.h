// A subcommand of `spoor`: its name, a one-line summary for `spoor help`,
// the long help for `spoor help CMD` / `spoor CMD --help`, and its entry.
#ifndef SPOOR_CLI_COMMAND_H
#define SPOOR_CLI_COMMAND_H

#include <string>
#include <string_view>
#include <vector>

namespace spoor::cli {

// What `spoor` exits with.
inline constexpr int kExitOk = 0;
inline constexpr int kExitTrace = 1;  // the trace cannot be read, or is damaged
inline constexpr int kExitUsage = 2;  // unknown command or option, missing argument

struct Command {
  std::string_view name;
  std::string_view summary;
  std::string_view help;  // usage line first, then options and what it prints
  // `args` are the words after the command name, without --help (main
  // answers that). Returns the exit status.
  int (*run)(const std::vector<std::string>& args);
};

extern const Command kDumpCommand;
extern const Command kExportCommand;
extern const Command kInfoCommand;
extern const Command kRecordCommand;
extern const Command kReportCommand;
extern const Command kDiffCommand;
extern const Command kSymbolizeCommand;

}  // namespace spoor::cli

#endif  // SPOOR_CLI_COMMAND_H
