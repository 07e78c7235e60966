#include "line_table.h"

#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>

namespace spoor::symbolizer {
namespace {

// The bytes of a section of the ELF file that holds `dwarf`'s DWARF.
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

Bytes section(Dwarf* dwarf, const char* wanted) {
  Elf* elf = dwarf_getelf(dwarf);
  size_t shstrndx = 0;
  if (elf == nullptr || elf_getshdrstrndx(elf, &shstrndx) != 0) return {};
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, header.sh_name);
    if (name == nullptr || std::strcmp(name, wanted) != 0) continue;
    // libdw decompresses the sections it reads in place when it opens them.
    if ((header.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(scn, 0, 0) < 0) return {};
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (d == nullptr || d->d_buf == nullptr) return {};
    return {static_cast<const uint8_t*>(d->d_buf), d->d_size};
  }
  return {};
}

// A bounds-checked reader; any overrun sets `bad` and reads zeros.
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
    for (size_t i = 0; i < n && i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
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
  int64_t sleb() {
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
      if (p >= end) {
        bad = true;
        return v;
      }
      b = *p++;
      if (shift < 64) v |= static_cast<int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(int64_t{1} << shift);
    return v;
  }
  const char* cstr() {
    const void* nul = std::memchr(p, 0, static_cast<size_t>(end - p));
    if (nul == nullptr) {
      bad = true;
      p = end;
      return "";
    }
    const char* s = reinterpret_cast<const char*>(p);
    p = static_cast<const uint8_t*>(nul) + 1;
    return s;
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

const char* string_at(const Bytes& strings, uint64_t offset) {
  if (strings.data == nullptr || offset >= strings.size) return nullptr;
  if (std::memchr(strings.data + offset, 0, strings.size - offset) == nullptr) return nullptr;
  return reinterpret_cast<const char*>(strings.data + offset);
}

struct EntryFormat {
  uint64_t content;
  uint64_t form;
};

// One DWARF 5 directory or file entry: its path string and directory
// index. False on a form this reader does not know.
bool read_entry(Cursor& c, const std::vector<EntryFormat>& formats, size_t offset_size, const Bytes& line_str,
                const Bytes& str, const char** path, uint64_t* dir) {
  for (const EntryFormat& f : formats) {
    const char* s = nullptr;
    uint64_t value = 0;
    switch (f.form) {
      case DW_FORM_string: s = c.cstr(); break;
      case DW_FORM_line_strp: s = string_at(line_str, c.fixed(offset_size)); break;
      case DW_FORM_strp: s = string_at(str, c.fixed(offset_size)); break;
      case DW_FORM_udata: value = c.uleb(); break;
      case DW_FORM_data1: value = c.fixed(1); break;
      case DW_FORM_data2: value = c.fixed(2); break;
      case DW_FORM_data4: value = c.fixed(4); break;
      case DW_FORM_data8: value = c.fixed(8); break;
      case DW_FORM_data16: c.skip(16); break;
      case DW_FORM_block: c.skip(c.uleb()); break;
      default: return false;
    }
    if (f.content == DW_LNCT_path) {
      if (s == nullptr) return false;
      *path = s;
    } else if (f.content == DW_LNCT_directory_index) {
      *dir = value;
    }
  }
  return !c.bad;
}

bool read_formats(Cursor& c, std::vector<EntryFormat>& formats) {
  const uint64_t count = c.fixed(1);
  for (uint64_t i = 0; i < count && !c.bad; ++i) {
    const uint64_t content = c.uleb();
    const uint64_t form = c.uleb();
    formats.push_back({content, form});
  }
  return !c.bad;
}

// GNU addr2line's join (BFD's concat_filename), which libdw's matches when
// directories are absolute: an absolute name as is; else "dir/name" for an
// absolute dir, "comp_dir/dir/name" for a relative one (libdw would leave
// it relative), "comp_dir/name" without a dir.
std::string join(const char* comp_dir, const char* dir, const char* name) {
  if (name[0] == '/') return name;
  std::string path;
  if (dir != nullptr && dir[0] == '/') {
    path = dir;
  } else if (comp_dir != nullptr) {
    path = comp_dir;
    if (dir != nullptr) path += std::string("/") + dir;
  } else if (dir != nullptr) {
    path = dir;
  } else {
    return name;
  }
  path += '/';
  path += name;
  return path;
}

}  // namespace

std::optional<LineTable> LineTable::read(Dwarf* dwarf, Dwarf_Die* unit) {
  Dwarf_Attribute attr;
  Dwarf_Word offset = 0;
  if (dwarf_attr(unit, DW_AT_stmt_list, &attr) == nullptr || dwarf_formudata(&attr, &offset) != 0)
    return std::nullopt;
  const Bytes lines = section(dwarf, ".debug_line");
  if (lines.data == nullptr || offset >= lines.size) return std::nullopt;
  const char* comp_dir = nullptr;
  if (dwarf_attr(unit, DW_AT_comp_dir, &attr) != nullptr) comp_dir = dwarf_formstring(&attr);

  Cursor c{lines.data + offset, lines.data + lines.size};
  uint64_t length = c.fixed(4);
  size_t offset_size = 4;
  if (length == 0xffffffff) {
    length = c.fixed(8);
    offset_size = 8;
  }
  if (c.bad || length > static_cast<uint64_t>(c.end - c.p)) return std::nullopt;
  c.end = c.p + length;
  const uint64_t version = c.fixed(2);
  if (version < 2 || version > 5) return std::nullopt;
  if (version >= 5) {
    c.fixed(1);  // address_size
    c.fixed(1);  // segment_selector_size
  }
  const uint64_t header_length = c.fixed(offset_size);
  if (c.bad || header_length > static_cast<uint64_t>(c.end - c.p)) return std::nullopt;
  const uint8_t* program = c.p + header_length;
  const uint64_t min_inst_length = c.fixed(1);
  if (version >= 4) c.fixed(1);  // maximum_operations_per_instruction (VLIW only)
  c.fixed(1);                    // default_is_stmt
  const int64_t line_base = static_cast<int8_t>(c.fixed(1));
  const uint64_t line_range = c.fixed(1);
  const uint64_t opcode_base = c.fixed(1);
  if (c.bad || line_range == 0 || opcode_base == 0) return std::nullopt;
  std::vector<uint8_t> arguments(opcode_base - 1);
  for (uint8_t& n : arguments) n = static_cast<uint8_t>(c.fixed(1));

  LineTable table;
  if (version >= 5) {
    const Bytes line_str = section(dwarf, ".debug_line_str");
    const Bytes str = section(dwarf, ".debug_str");
    std::vector<EntryFormat> dir_formats, file_formats;
    if (!read_formats(c, dir_formats)) return std::nullopt;
    std::vector<const char*> dirs(c.uleb());
    for (const char*& dir : dirs) {
      uint64_t unused = 0;
      dir = nullptr;
      if (!read_entry(c, dir_formats, offset_size, line_str, str, &dir, &unused)) return std::nullopt;
    }
    if (!read_formats(c, file_formats)) return std::nullopt;
    const uint64_t files = c.uleb();
    for (uint64_t i = 0; i < files && !c.bad; ++i) {
      const char* name = nullptr;
      uint64_t dir = 0;
      if (!read_entry(c, file_formats, offset_size, line_str, str, &name, &dir) || name == nullptr)
        return std::nullopt;
      table.files_.push_back(join(comp_dir, dir < dirs.size() ? dirs[dir] : nullptr, name));
    }
  } else {
    std::vector<const char*> dirs{nullptr};  // index 0: the comp dir
    while (!c.bad && c.p < c.end && *c.p != 0) dirs.push_back(c.cstr());
    c.fixed(1);
    table.files_.push_back("???");
    while (!c.bad && c.p < c.end && *c.p != 0) {
      const char* name = c.cstr();
      const uint64_t dir = c.uleb();
      c.uleb();  // mtime
      c.uleb();  // length
      table.files_.push_back(join(comp_dir, dir < dirs.size() ? dirs[dir] : nullptr, name));
    }
  }
  if (c.bad || program > c.end) return std::nullopt;
  c.p = program;

  // The state machine, without what rows do not keep (is_stmt, blocks,
  // ISA, VLIW op_index).
  // Most rows cost one byte of program (a special opcode) and a few bytes
  // more with a column or file change: reserve for that, not to regrow.
  std::vector<Row> rows;
  rows.reserve(static_cast<size_t>(c.end - c.p) / 3 + 16);
  struct State {
    uint64_t address = 0;
    int64_t line = 1;
    uint64_t file = 1;
    uint64_t column = 0;
    uint64_t discriminator = 0;
    bool file_set = false;
  } s;
  auto clamp16 = [](uint64_t v) { return static_cast<uint16_t>(v > 0xffff ? 0xffff : v); };
  auto emit = [&](bool end_sequence) {
    rows.push_back({s.address, static_cast<uint32_t>(s.line < 0 ? 0 : s.line), clamp16(s.file),
                           clamp16(s.column), clamp16(s.discriminator), end_sequence,
                           version >= 5 && !s.file_set});
    s.discriminator = 0;
  };
  while (c.p < c.end && !c.bad) {
    const uint8_t op = static_cast<uint8_t>(c.fixed(1));
    if (op >= opcode_base) {
      const uint64_t adjusted = op - opcode_base;
      s.address += (adjusted / line_range) * min_inst_length;
      s.line += line_base + static_cast<int64_t>(adjusted % line_range);
      emit(false);
      continue;
    }
    switch (op) {
      case 0: {
        const uint64_t len = c.uleb();
        if (len == 0 || len > static_cast<uint64_t>(c.end - c.p)) return std::nullopt;
        const uint8_t* next = c.p + len;
        const uint8_t sub = static_cast<uint8_t>(c.fixed(1));
        if (sub == DW_LNE_end_sequence) {
          emit(true);
          s = State{};
        } else if (sub == DW_LNE_set_address) {
          s.address = c.fixed(len - 1);
        } else if (sub == DW_LNE_set_discriminator) {
          s.discriminator = c.uleb();
        }
        c.p = next;
        break;
      }
      case DW_LNS_copy: emit(false); break;
      case DW_LNS_advance_pc: s.address += c.uleb() * min_inst_length; break;
      case DW_LNS_advance_line: s.line += c.sleb(); break;
      case DW_LNS_set_file:
        s.file = c.uleb();
        s.file_set = true;
        break;
      case DW_LNS_set_column: s.column = c.uleb(); break;
      case DW_LNS_const_add_pc: s.address += ((255 - opcode_base) / line_range) * min_inst_length; break;
      case DW_LNS_fixed_advance_pc: s.address += c.fixed(2); break;
      default:
        for (uint8_t i = 0; i < arguments[op - 1]; ++i) c.uleb();
        break;
    }
  }
  if (c.bad) return std::nullopt;
  // libdw's order: by address, an end_sequence row before a normal one at
  // the same address, else the program's order.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.address != b.address) return a.address < b.address;
    return a.end_sequence > b.end_sequence;
  });
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.file > kFileMask) return std::nullopt;  // libdw's tables then
    // find() takes the last row at an address: the others are never seen.
    if (i + 1 < rows.size() && rows[i + 1].address == r.address) continue;
    const uint16_t flags = static_cast<uint16_t>(r.file | (r.end_sequence ? kEndSequence : 0) |
                                                 (r.bfd_file0 ? kBfdFile0 : 0));
    // A row that says what the row before it says changes no lookup.
    if (!table.rows_.empty()) {
      const PackedRow& last = table.rows_.back();
      const uint16_t last_discriminator =
          table.discriminators_.empty() || table.discriminators_.back().first != last.address
              ? 0
              : table.discriminators_.back().second;
      if ((last.file_and_flags & kEndSequence) == 0 && !r.end_sequence && last.file_and_flags == flags &&
          last.line == r.line && last.column == r.column && last_discriminator == r.discriminator)
        continue;
    }
    table.rows_.push_back({r.address, r.line, flags, r.column});
    if (r.discriminator != 0) table.discriminators_.emplace_back(r.address, r.discriminator);
  }
  table.rows_.shrink_to_fit();
  table.discriminators_.shrink_to_fit();
  return table;
}

bool LineTable::find(uint64_t address, Row* row) const {
  auto it = std::upper_bound(rows_.begin(), rows_.end(), address,
                             [](uint64_t a, const PackedRow& r) { return a < r.address; });
  if (it == rows_.begin()) return false;
  const PackedRow& packed = *(it - 1);
  if (packed.file_and_flags & kEndSequence) return false;
  row->address = packed.address;
  row->line = packed.line;
  row->file = packed.file_and_flags & kFileMask;
  row->column = packed.column;
  row->end_sequence = false;
  row->bfd_file0 = (packed.file_and_flags & kBfdFile0) != 0;
  auto d = std::lower_bound(discriminators_.begin(), discriminators_.end(), std::make_pair(packed.address, uint16_t{0}));
  row->discriminator = d != discriminators_.end() && d->first == packed.address ? d->second : 0;
  return true;
}

const char* LineTable::file(uint64_t index) const {
  return index < files_.size() ? files_[index].c_str() : nullptr;
}

}  // namespace spoor::symbolizer
