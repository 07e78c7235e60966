#include "bfd_first_file.h"

#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>

namespace spoor::symbolizer {
namespace {

// A bounds-checked reader over one line program; any overrun sets `bad`.
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool bad = false;

  uint64_t fixed(size_t n) {
    if (static_cast<size_t>(end - p) < n) {
      bad = true;
      p = end;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    p += n;
    return v;
  }
  uint64_t uleb() {
    uint64_t v = 0;
    for (int shift = 0; p < end; shift += 7) {
      const uint8_t b = *p++;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    bad = true;
    return v;
  }
  void skip(uint64_t n) {
    if (static_cast<uint64_t>(end - p) < n) {
      bad = true;
      p = end;
    } else {
      p += n;
    }
  }
};

bool debug_line(Dwarf* dwarf, const uint8_t** data, size_t* size) {
  Elf* elf = dwarf_getelf(dwarf);
  size_t shstrndx = 0;
  if (elf == nullptr || elf_getshdrstrndx(elf, &shstrndx) != 0) return false;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, header.sh_name);
    if (name == nullptr || std::strcmp(name, ".debug_line") != 0) continue;
    // libdw has decompressed the sections it reads in place already.
    if ((header.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(scn, 0, 0) < 0) return false;
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (d == nullptr || d->d_buf == nullptr) return false;
    *data = static_cast<const uint8_t*>(d->d_buf);
    *size = d->d_size;
    return true;
  }
  return false;
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> bfd_file0_ranges(Dwarf* dwarf, Dwarf_Die* unit) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  Dwarf_Attribute attr;
  Dwarf_Word offset = 0;
  if (dwarf_attr(unit, DW_AT_stmt_list, &attr) == nullptr || dwarf_formudata(&attr, &offset) != 0) return ranges;
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (!debug_line(dwarf, &data, &size) || offset >= size) return ranges;

  Cursor c{data + offset, data + size};
  uint64_t length = c.fixed(4);
  size_t offset_size = 4;
  if (length == 0xffffffff) {
    length = c.fixed(8);
    offset_size = 8;
  }
  if (c.bad || length > static_cast<uint64_t>(c.end - c.p)) return ranges;
  c.end = c.p + length;
  const uint64_t version = c.fixed(2);
  if (version != 5) return ranges;
  c.fixed(1);  // address_size
  c.fixed(1);  // segment_selector_size
  const uint64_t header_length = c.fixed(offset_size);
  const uint8_t* program = c.p + header_length;
  const uint64_t min_inst_length = c.fixed(1);
  c.fixed(1);  // maximum_operations_per_instruction (VLIW only)
  c.fixed(1);  // default_is_stmt
  c.fixed(1);  // line_base
  const uint64_t line_range = c.fixed(1);
  const uint64_t opcode_base = c.fixed(1);
  std::vector<uint8_t> arguments(opcode_base > 0 ? opcode_base - 1 : 0);
  for (uint8_t& n : arguments) n = static_cast<uint8_t>(c.fixed(1));
  if (c.bad || line_range == 0 || program > c.end) return ranges;
  c.p = program;

  // The state the quirk needs: address, and whether this sequence has set
  // its file yet. A row before that starts (or extends) a range that the
  // next row of the sequence ends.
  uint64_t address = 0;
  bool file_set = false;
  bool open = false;
  auto row = [&](bool end_sequence) {
    if (open) {
      if (address > ranges.back().first) ranges.back().second = address;
      else ranges.pop_back();
      open = false;
    }
    if (!end_sequence && !file_set) {
      if (!ranges.empty() && ranges.back().second == address) {
        open = true;  // extend the range the previous row ended
      } else {
        ranges.emplace_back(address, address);
        open = true;
      }
    }
  };
  while (c.p < c.end && !c.bad) {
    const uint8_t op = static_cast<uint8_t>(c.fixed(1));
    if (op >= opcode_base) {
      address += (static_cast<uint64_t>(op - opcode_base) / line_range) * min_inst_length;
      row(false);
      continue;
    }
    switch (op) {
      case 0: {
        const uint64_t len = c.uleb();
        if (len == 0) break;
        const uint8_t* next = c.p + len;
        if (len > static_cast<uint64_t>(c.end - c.p)) return {};
        const uint8_t sub = static_cast<uint8_t>(c.fixed(1));
        if (sub == DW_LNE_end_sequence) {
          row(true);
          address = 0;
          file_set = false;
        } else if (sub == DW_LNE_set_address) {
          address = c.fixed(len - 1 > 8 ? 8 : len - 1);
        }
        c.p = next;
        break;
      }
      case DW_LNS_copy: row(false); break;
      case DW_LNS_advance_pc: address += c.uleb() * min_inst_length; break;
      case DW_LNS_const_add_pc: address += ((255 - opcode_base) / line_range) * min_inst_length; break;
      case DW_LNS_fixed_advance_pc: address += c.fixed(2); break;
      case DW_LNS_set_file:
        c.uleb();
        file_set = true;
        break;
      default:
        for (uint8_t i = 0; i < arguments[op - 1]; ++i) c.uleb();
        break;
    }
  }
  if (c.bad) return {};
  if (open && ranges.back().second <= ranges.back().first) ranges.pop_back();
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

}  // namespace spoor::symbolizer
