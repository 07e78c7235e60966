// spoor: the command-line tool. This file is the subcommand table and
// `help`; every other subcommand lives in its own file.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "command.h"

namespace spoor::cli {
namespace {

int run_help(const std::vector<std::string>& args);

const Command kHelpCommand = {
    "help",
    "Explain spoor or one of its commands",
    "usage: spoor help [COMMAND]\n\nLists the commands, or explains one.\n",
    run_help,
};

// In the order `spoor help` lists them.
const Command* const kCommands[] = {&kRecordCommand, &kReportCommand, &kDiffCommand, &kExportCommand,
                                     &kDumpCommand,   &kInfoCommand,   &kSymbolizeCommand, &kHelpCommand};

const Command* find_command(std::string_view name) {
  for (const Command* c : kCommands)
    if (c->name == name) return c;
  return nullptr;
}

void print_overview(FILE* out) {
  std::fprintf(out,
               "usage: spoor COMMAND [ARGS...]\n"
               "\n"
               "Records programs into Spoor traces, and reads, reports, symbolizes and exports them.\n"
               "\n"
               "commands:\n");
  for (const Command* c : kCommands)
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(c->name.size()), c->name.data(),
                 static_cast<int>(c->summary.size()), c->summary.data());
  std::fprintf(out, "\nRun 'spoor help COMMAND' or 'spoor COMMAND --help' for details.\n");
}

void print_help(const Command& c) {
  std::fwrite(c.help.data(), 1, c.help.size(), stdout);
  if (!c.help.empty() && c.help.back() != '\n') std::fputc('\n', stdout);
}

int unknown_command(std::string_view name) {
  std::fprintf(stderr, "spoor: unknown command '%.*s'; run 'spoor help' for the list\n",
               static_cast<int>(name.size()), name.data());
  return kExitUsage;
}

int run_help(const std::vector<std::string>& args) {
  if (args.empty()) {
    print_overview(stdout);
    return kExitOk;
  }
  if (args.size() > 1) {
    std::fprintf(stderr, "spoor help: expects at most one command name; run 'spoor help help'\n");
    return kExitUsage;
  }
  const Command* c = find_command(args[0]);
  if (c == nullptr) return unknown_command(args[0]);
  print_help(*c);
  return kExitOk;
}

// True when the words ask for help before any "--".
bool wants_help(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

// A command that reads traces may fetch debug info from debuginfod
// (DEBUGINFOD_URLS), tens of MB for a libc: on a terminal, libdebuginfod's
// own progress line says so rather than a silent pause. Not for `record`,
// whose environment is the traced program's.
void show_debuginfod_downloads(const Command& c) {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (&c != &kRecordCommand && urls != nullptr && urls[0] != '\0' && isatty(STDERR_FILENO))
    setenv("DEBUGINFOD_PROGRESS", "1", /*overwrite=*/0);
}

}  // namespace
}  // namespace spoor::cli

int main(int argc, char** argv) {
  using namespace spoor::cli;
  if (argc < 2) {
    print_overview(stderr);
    return kExitUsage;
  }
  const std::string name = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (name == "--help" || name == "-h") {
    print_overview(stdout);
    return kExitOk;
  }
  const Command* c = find_command(name);
  if (c == nullptr) return unknown_command(name);
  if (wants_help(args)) {
    print_help(*c);
    return kExitOk;
  }
  show_debuginfod_downloads(*c);
  return c->run(args);
}
