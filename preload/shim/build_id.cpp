#include "build_id.h"

#include <elf.h>

namespace spoor::preload {

uint32_t build_id_in_memory(const dl_phdr_info* info, const uint8_t** out) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + ((note->n_namesz + 3) & ~3u);
      if (desc + note->n_descsz > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && name[0] == 'G' && name[1] == 'N' &&
          name[2] == 'U') {
        *out = desc;
        return note->n_descsz;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  *out = nullptr;
  return 0;
}

}  // namespace spoor::preload
