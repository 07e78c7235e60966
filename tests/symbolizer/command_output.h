// Running a command from a test: its stdout and exit status (stderr goes
// where the test's goes, unless the command line redirects it).
#ifndef SPOOR_TEST_COMMAND_OUTPUT_H
#define SPOOR_TEST_COMMAND_OUTPUT_H

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace spoor::symbolizer::test {

struct CommandResult {
  std::string out;
  int status = -1;  // the exit status; -1 when it did not exit normally
};

inline CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace spoor::symbolizer::test

#endif  // SPOOR_TEST_COMMAND_OUTPUT_H
