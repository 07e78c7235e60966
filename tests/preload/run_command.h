// Running other programs from a test: a shell command line with its output
// captured, and whether a tool is installed.
#ifndef SPOOR_TESTS_RUN_COMMAND_H
#define SPOOR_TESTS_RUN_COMMAND_H

#include <string>

namespace spoor::test {

struct Process {
  int status = -1;  // shell-style exit status: the code, or 128 + the signal
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` with /bin/sh, capturing stdout and stderr.
Process run(const std::string& command);

// True when `tool` is an executable found on PATH.
bool on_path(const std::string& tool);

// A path in the temporary directory unique to this test process.
std::string temp_path(const std::string& name);

// The whole content of a file, or "" when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace spoor::test

#endif  // SPOOR_TESTS_RUN_COMMAND_H
