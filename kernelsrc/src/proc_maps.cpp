#include "spoor/kernelsrc/proc_maps.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
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
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  size_t phnum = 0;
  if (elf != nullptr && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum && id.empty(); ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_NOTE) continue;
      Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(ph.p_offset), ph.p_filesz, ELF_T_NHDR);
      if (data == nullptr) continue;
      size_t at = 0, name_at = 0, desc_at = 0;
      GElf_Nhdr nh;
      while ((at = gelf_getnote(data, at, &nh, &name_at, &desc_at)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            std::memcmp(static_cast<const char*>(data->d_buf) + name_at, "GNU", 4) == 0) {
          const auto* d = static_cast<const uint8_t*>(data->d_buf) + desc_at;
          id.assign(d, d + nh.n_descsz);
          break;
        }
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return id;
}

}  // namespace spoor::kernelsrc
