#include "peer_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"

namespace spoor::test {

ShellRun run_shell(const std::string& command) {
  const std::string err_file = scratch_path("stderr");
  ShellRun r;
  FILE* p = popen((command + " 2>" + err_file).c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.err = file_content(err_file);
  std::filesystem::remove(err_file);
  return r;
}

bool tool_installed(const std::string& tool) {
  return run_shell("command -v '" + tool + "' >/dev/null").status == 0;
}

std::string scratch_path(const std::string& name) {
  return spoor::test::test_temp_path("peer-" + name);
}

std::string file_content(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace spoor::test
