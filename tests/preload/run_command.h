// Running spoor record (or anything) from a test: a shell command line with
// its stdout, stderr and exit status captured, and a trace path per test.
#ifndef SPOOR_TESTS_PRELOAD_RUN_COMMAND_H
#define SPOOR_TESTS_PRELOAD_RUN_COMMAND_H

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace spoor::test {

struct Process {
  int status = -1;  // shell-style exit status
  std::string out;  // stdout
  std::string err;  // stderr
};

inline Process run(const std::string& command) {
  const std::string err_file =
      std::filesystem::temp_directory_path() / ("spoor-run-err-" + std::to_string(getpid()));
  Process r;
  FILE* p = popen((command + " 2>" + err_file).c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  FILE* e = fopen(err_file.c_str(), "r");
  while (e && (n = fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
  if (e) fclose(e);
  std::filesystem::remove(err_file);
  return r;
}

// A fresh path in this test process's own temporary directory (removed
// when the process ends: temp_dir.h).
inline std::string temp_path(const std::string& name) { return test_temp_path(name); }

// Whether a program is on the PATH (a test that needs one skips without).
inline bool have_program(const std::string& name) { return run("command -v " + name).status == 0; }

// Of `functions`, those `program` does not import from its libraries
// (nm -D --undefined-only): a test checks that its program really calls
// what the test is about (the fortified forms, say).
inline std::vector<std::string> missing_imports(const std::string& program, const std::vector<std::string>& functions) {
  const Process imports = run("nm -D --undefined-only " + program);
  std::vector<std::string> missing;
  for (const std::string& fn : functions)
    if (imports.out.find(" " + fn + "@") == std::string::npos) missing.push_back(fn);
  return missing;
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_PRELOAD_RUN_COMMAND_H
