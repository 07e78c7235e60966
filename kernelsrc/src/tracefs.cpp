#include "spoor/kernelsrc/tracefs.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace spoor::kernelsrc {
namespace {

bool read_file(const std::string& path, std::string* text, int* err) {
  std::ifstream in(path);
  if (!in) {
    *err = errno;
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

// "unsigned long args[6]" -> "args"; "__data_loc char[] cmd" -> "cmd".
std::string field_name(std::string decl) {
  while (!decl.empty() && decl.back() == ' ') decl.pop_back();
  if (const size_t bracket = decl.find('['); bracket != std::string::npos && bracket + 1 < decl.size() &&
                                              decl[bracket + 1] != ']')
    decl.resize(bracket);
  const size_t space = decl.find_last_of(" *");
  return space == std::string::npos ? decl : decl.substr(space + 1);
}

}  // namespace

std::optional<TracepointFormat> parse_tracepoint_format(const std::string& text) {
  TracepointFormat f;
  bool have_id = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("ID:")) {
      f.id = std::strtoull(line.c_str() + 3, nullptr, 10);
      have_id = true;
      continue;
    }
    const size_t field = line.find("field:");
    if (field == std::string::npos) continue;
    const size_t semi = line.find(';', field);
    if (semi == std::string::npos) continue;
    TracepointField tf;
    const size_t off = line.find("offset:", semi), size = line.find("size:", semi), sign = line.find("signed:", semi);
    if (off == std::string::npos || size == std::string::npos) continue;
    tf.offset = static_cast<uint32_t>(std::strtoul(line.c_str() + off + 7, nullptr, 10));
    tf.size = static_cast<uint32_t>(std::strtoul(line.c_str() + size + 5, nullptr, 10));
    tf.is_signed = sign != std::string::npos && line[sign + 7] == '1';
    f.fields[field_name(line.substr(field + 6, semi - field - 6))] = tf;
  }
  if (!have_id) return std::nullopt;
  return f;
}

Tracefs::Tracefs() {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    const std::string events = std::string(dir) + "/events";
    if (access(events.c_str(), X_OK) == 0) {
      root_ = events;
      return;
    }
    if (errno == EACCES) error_ = std::string(dir) + " is not readable by this user (tracefs is root-only)";
  }
  // Not mounted: mount a private instance (root only), read what we need,
  // and take it away again, leaving the machine as it was.
  char dir[] = "/tmp/spoor-tracefs-XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    if (error_.empty()) error_ = std::string("tracefs is not mounted and no directory to mount it: ") + std::strerror(errno);
    return;
  }
  if (mount("nodev", dir, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    const int err = errno;
    rmdir(dir);
    if (error_.empty())
      error_ = std::string("tracefs is not mounted and cannot be (") + std::strerror(err) +
               "): as root, mount it with `mount -t tracefs nodev /sys/kernel/tracing`";
    return;
  }
  private_mount_ = dir;
  root_ = private_mount_ + "/events";
}

Tracefs::~Tracefs() {
  if (private_mount_.empty()) return;
  umount2(private_mount_.c_str(), MNT_DETACH);
  rmdir(private_mount_.c_str());
}

TracepointId Tracefs::lookup(const std::string& group, const std::string& name) {
  if (root_.empty()) return {0, error_.empty() ? "tracefs is not available" : error_};
  const std::string path = root_ + "/" + group + "/" + name + "/format";
  std::string text;
  int err = 0;
  if (!read_file(path, &text, &err)) {
    std::string why = err == ENOENT ? "no such tracepoint on this kernel" : std::strerror(err);
    if (err == EACCES) why += " (tracefs is root-only)";
    return {0, "cannot read " + path.substr(root_.size() - 6) + ": " + why};
  }
  auto format = parse_tracepoint_format(text);
  if (!format) return {0, "cannot parse the format of " + group + ":" + name};
  formats_[group + ":" + name] = *format;
  return {format->id, ""};
}

const TracepointFormat* Tracefs::format(const std::string& group, const std::string& name) const {
  auto it = formats_.find(group + ":" + name);
  return it == formats_.end() ? nullptr : &it->second;
}

}  // namespace spoor::kernelsrc
