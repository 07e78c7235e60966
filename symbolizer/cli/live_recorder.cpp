#include "live_recorder.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace spoor::cli {
namespace {

// Whether one of `pid`'s descriptors is the file `file` (same device and
// inode). nullopt when its descriptors cannot be listed (another user's).
std::optional<bool> holds_open(uint32_t pid, const struct stat& file) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* fds = opendir(dir.c_str());
  if (fds == nullptr) return std::nullopt;
  bool found = false;
  while (const dirent* d = readdir(fds)) {
    if (d->d_name[0] == '.') continue;
    struct stat st {};
    if (stat((dir + "/" + d->d_name).c_str(), &st) == 0 && st.st_dev == file.st_dev && st.st_ino == file.st_ino) {
      found = true;
      break;
    }
  }
  closedir(fds);
  return found;
}

}  // namespace

bool recording_finished(const reader::Trace& trace) {
  if (trace.streams().empty() || trace.damage().has_value()) return false;
  return std::all_of(trace.streams().begin(), trace.streams().end(),
                     [](const reader::Stream& s) { return s.end.has_value(); });
}

uint32_t recorder_pid(const reader::Trace& trace) {
  const reader::Stream* own = trace.stream(0);
  const reader::Process* recorder = own != nullptr ? trace.process(own->pid) : nullptr;
  return recorder != nullptr && recorder->name == "spoor" ? recorder->pid : 0;
}

bool recorder_gone(uint32_t pid) {
  if (pid == 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  char state = 0;
  if (FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r")) {
    // "pid (comm) S ...": the state follows the last ')' (comm may hold any).
    char line[512];
    const size_t n = std::fread(line, 1, sizeof line - 1, stat);
    std::fclose(stat);
    line[n] = '\0';
    if (const char* close = std::strrchr(line, ')'); close != nullptr && close[1] == ' ') state = close[2];
  }
  return state == 'Z' || state == 'X';
}

uint32_t live_recorder(const reader::Trace& trace, const std::string& path) {
  if (path == "-" || recording_finished(trace)) return 0;
  const uint32_t pid = recorder_pid(trace);
  if (pid == 0 || recorder_gone(pid)) return 0;
  struct stat file {};
  if (stat(path.c_str(), &file) != 0) return 0;
  // Unlisted descriptors (a recorder of another user): alive is all we know.
  return holds_open(pid, file).value_or(true) ? pid : 0;
}

}  // namespace spoor::cli
