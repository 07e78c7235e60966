#include "spoor/unwind/mapping_bias.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

namespace spoor::unwind {

const MappingBias::File& MappingBias::file(const std::string& path) {
  auto [it, inserted] = files_.try_emplace(path);
  if (!inserted) return it->second;
  File& f = it->second;
  elf_version(EV_CURRENT);
  const int fd = open((sysroot_ + path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return f;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    size_t phnum = 0;
    if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
      f.readable = true;
      for (size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD)
          f.loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
      }
      const void* id = nullptr;
      const ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
      if (n > 0) f.build_id.assign(static_cast<const uint8_t*>(id), static_cast<const uint8_t*>(id) + n);
    }
    elf_end(elf);
  }
  close(fd);
  return f;
}

std::optional<symbolizer::ModuleInfo> MappingBias::module(const Mapping& m) {
  const File& f = file(m.path);
  if (!f.readable) return std::nullopt;
  // The segment whose first page is the mapping's: pgoff is page-aligned,
  // p_offset need not be (p_offset - pgoff < one page).
  constexpr uint64_t kMaxPage = 64 * 1024;
  for (const Segment& s : f.loads) {
    if (s.offset < m.pgoff || s.offset - m.pgoff >= kMaxPage) continue;
    if (s.offset > m.pgoff + m.length) continue;
    symbolizer::ModuleInfo info;
    info.path = m.path;
    info.build_id = m.build_id.empty() ? f.build_id : m.build_id;
    info.bias = m.start + (s.offset - m.pgoff) - s.vaddr;
    info.start = m.start;
    info.size = m.length;
    return info;
  }
  return std::nullopt;
}

}  // namespace spoor::unwind
