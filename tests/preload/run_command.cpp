#include "run_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace spoor::test {

Process run(const std::string& command) {
  const std::string err_file = temp_path("stderr");
  Process r;
  FILE* p = popen((command + " 2>" + err_file).c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.err = read_file(err_file);
  std::filesystem::remove(err_file);
  return r;
}

bool on_path(const std::string& tool) {
  return run("command -v '" + tool + "' >/dev/null").status == 0;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("spoor-peer-" + std::to_string(getpid()) + "-" + name)).string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace spoor::test
