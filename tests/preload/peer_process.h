// Running other programs from a test: a shell command line with its output
// captured, and whether a tool is installed.
#ifndef SPOOR_TESTS_PEER_PROCESS_H
#define SPOOR_TESTS_PEER_PROCESS_H

#include <string>

namespace spoor::test {

struct ShellRun {
  int status = -1;  // shell-style exit status: the code, or 128 + the signal
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` with /bin/sh, capturing stdout and stderr.
ShellRun run_shell(const std::string& command);

// True when `tool` is an executable found on PATH.
bool tool_installed(const std::string& tool);

// A path in the temporary directory unique to this test process.
std::string scratch_path(const std::string& name);

// The whole content of a file, or "" when it cannot be read.
std::string file_content(const std::string& path);

}  // namespace spoor::test

#endif  // SPOOR_TESTS_PEER_PROCESS_H
