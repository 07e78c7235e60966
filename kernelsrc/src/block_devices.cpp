#include "spoor/kernelsrc/block_devices.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace spoor::kernelsrc {
namespace {

namespace fs = std::filesystem;

// DEVNAME from a uevent file ("MAJOR=8\nMINOR=0\nDEVNAME=sda\n..."), or "".
std::string uevent_devname(const fs::path& uevent) {
  std::ifstream in(uevent);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("DEVNAME=")) return line.substr(8);
  return "";
}

}  // namespace

std::vector<BlockDeviceName> block_device_names(const std::string& dir) {
  std::vector<BlockDeviceName> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    unsigned major = 0, minor = 0;
    char end = 0;
    if (std::sscanf(e.path().filename().c_str(), "%u:%u%c", &major, &minor, &end) != 2) continue;
    std::string name = uevent_devname(e.path() / "uevent");
    if (name.empty()) {
      std::error_code link_ec;
      const fs::path target = fs::read_symlink(e.path(), link_ec);
      if (!link_ec) name = target.filename().string();
    }
    if (name.empty()) continue;
    out.push_back({kernel_dev(major, minor), std::move(name)});
  }
  std::sort(out.begin(), out.end(), [](const BlockDeviceName& a, const BlockDeviceName& b) { return a.dev < b.dev; });
  return out;
}

}  // namespace spoor::kernelsrc
