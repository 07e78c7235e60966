#include "code_starts.h"

#include <dwarf.h>
#include <gelf.h>

#include <algorithm>
#include <cstring>

namespace spoor::symbolizer {
namespace {

// Bytes of an encoded pointer or count of the header's own fields.
size_t encoded_size(uint8_t encoding) {
  switch (encoding & 0x0f) {
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4: return 4;
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8: return 8;
    default: return 0;
  }
}

}  // namespace

CodeStarts::CodeStarts(Elf* elf) {
  size_t count = 0;
  const char* ident = elf != nullptr ? elf_getident(elf, nullptr) : nullptr;
  // Read as little-endian words below (x86-64, aarch64, riscv64, Arm).
  if (ident == nullptr || ident[EI_DATA] != ELFDATA2LSB || elf_getphdrnum(elf, &count) != 0) return;
  GElf_Phdr header{};
  bool found = false;
  for (size_t i = 0; i < count && !found; ++i)
    found = gelf_getphdr(elf, static_cast<int>(i), &header) != nullptr && header.p_type == PT_GNU_EH_FRAME;
  if (!found || header.p_filesz < 12) return;
  Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(header.p_offset), header.p_filesz, ELF_T_BYTE);
  if (data == nullptr || data->d_buf == nullptr) return;
  const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
  const size_t size = data->d_size;
  const uint8_t version = bytes[0], frame_pointer_encoding = bytes[1], count_encoding = bytes[2],
                table_encoding = bytes[3];
  const size_t skip = encoded_size(frame_pointer_encoding);
  if (version != 1 || skip == 0 || count_encoding != DW_EH_PE_udata4 ||
      table_encoding != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || 4 + skip + 4 > size)
    return;
  uint32_t entries = 0;
  std::memcpy(&entries, bytes + 4 + skip, 4);  // little-endian hosts only, as Spoor's symbolizer runs
  const size_t table = 4 + skip + 4;
  if (entries > (size - table) / 8) return;  // a table longer than its segment: damaged
  starts_.reserve(entries);
  for (uint32_t i = 0; i < entries; ++i) {
    int32_t offset = 0;
    std::memcpy(&offset, bytes + table + 8 * uint64_t{i}, 4);
    starts_.push_back(header.p_vaddr + static_cast<int64_t>(offset));
  }
  std::sort(starts_.begin(), starts_.end());  // sorted by the linker; a damaged file need not be
}

std::optional<uint64_t> CodeStarts::at_or_before(uint64_t address) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), address);
  if (it == starts_.begin()) return std::nullopt;
  return *(it - 1);
}

}  // namespace spoor::symbolizer
