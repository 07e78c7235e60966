#include "spoor/kernelsrc/proc_maps.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace spoor::kernelsrc {

std::vector<Mapping> parse_proc_maps(const std::string& text) {
  std::vector<Mapping> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    char perms[8] = {};
    char dev[32] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %31s %llu %n", &start, &end, perms, &offset, dev, &inode,
                    &path_at) < 6 || end <= start)
      continue;
    Mapping m;
    m.start = start;
    m.length = end - start;
    m.pgoff = offset;
    m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
             (perms[2] == 'x' ? PROT_EXEC : 0);
    m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
    if (path_at > 0 && static_cast<size_t>(path_at) <= line.size()) m.path = line.substr(static_cast<size_t>(path_at));
    out.push_back(m);
  }
  return out;
}

std::vector<Mapping> executable_mappings(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::ostringstream s;
  s << in.rdbuf();
  std::vector<Mapping> out;
  for (Mapping& m : parse_proc_maps(s.str()))
    if ((m.prot & PROT_EXEC) && !m.path.empty()) out.push_back(std::move(m));
  return out;
}

std::vector<uint8_t> file_build_id(const std::string& path) {
  std::vector<uint8_t> id;
  if (path.empty() || path[0] != '/') return id;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return id;
  elf_version(EV_CURRENT);
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    const void* bytes = nullptr;
    const ssize_t n = dwelf_elf_gnu_build_id(elf, &bytes);
    if (n > 0) id.assign(static_cast<const uint8_t*>(bytes), static_cast<const uint8_t*>(bytes) + n);
    elf_end(elf);
  }
  close(fd);
  return id;
}

}  // namespace spoor::kernelsrc
