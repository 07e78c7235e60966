#include "spoor/kernelsrc/kernel_symbols.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace spoor::kernelsrc {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The next space-separated word of `line` from `at`, or "".
std::string_view word(std::string_view line, size_t& at) {
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
  const size_t start = at;
  while (at < line.size() && line[at] != ' ' && line[at] != '\t') ++at;
  return line.substr(start, at - start);
}

struct TextSymbol {
  uint64_t address;
  size_t line;  // offset of its line in the text
};

// "ADDRESS TYPE NAME[ [MODULE]]": the address when TYPE is text's.
bool text_symbol(std::string_view line, uint64_t* address) {
  size_t at = 0;
  uint64_t v = 0;
  while (at < line.size() && line[at] != ' ') {
    const int d = hex_digit(line[at]);
    if (d < 0 || at >= 16) return false;
    v = v << 4 | static_cast<uint64_t>(d);
    ++at;
  }
  if (at == 0 || at + 3 >= line.size() || line[at + 2] != ' ') return false;
  const char type = line[at + 1];
  if (type != 't' && type != 'T' && type != 'w' && type != 'W') return false;
  *address = v;
  return true;
}

}  // namespace

std::vector<KernelSymbol> kernel_symbols_holding(std::string_view kallsyms, std::vector<uint64_t> addresses) {
  std::vector<TextSymbol> table;
  table.reserve(kallsyms.size() / 40);
  bool any_address = false;
  for (size_t at = 0; at < kallsyms.size();) {
    size_t end = kallsyms.find('\n', at);
    if (end == std::string_view::npos) end = kallsyms.size();
    uint64_t address = 0;
    if (text_symbol(kallsyms.substr(at, end - at), &address)) {
      table.push_back({address, at});
      any_address |= address != 0;
    }
    at = end + 1;
  }
  std::vector<KernelSymbol> out;
  if (!any_address) return out;
  std::stable_sort(table.begin(), table.end(), [](const TextSymbol& a, const TextSymbol& b) { return a.address < b.address; });
  std::sort(addresses.begin(), addresses.end());
  size_t last = table.size();  // the entry last written, none yet
  for (const uint64_t a : addresses) {
    auto it = std::upper_bound(table.begin(), table.end(), a,
                               [](uint64_t v, const TextSymbol& s) { return v < s.address; });
    if (it == table.begin()) continue;
    const size_t i = static_cast<size_t>(it - table.begin()) - 1;
    if (i == last) continue;
    last = i;
    std::string_view line = kallsyms.substr(table[i].line);
    line = line.substr(0, line.find('\n'));
    size_t at = 0;
    word(line, at);  // the address
    word(line, at);  // the type
    const std::string_view name = word(line, at);
    std::string_view module = word(line, at);
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']') module = module.substr(1, module.size() - 2);
    else module = {};
    if (!name.empty()) out.push_back({table[i].address, std::string(name), std::string(module)});
  }
  return out;
}

// Room for this machine's 5.4 MB at once (no copy while it grows).
std::string read_kallsyms(const char* path) { return read_text_file(path, 8 << 20); }

std::string read_text_file(const char* path, size_t expected) {
  std::string text;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  // The pieces the kernel formats kallsyms fastest in (1 MiB reads took
  // 2.5x as long).
  constexpr size_t kPiece = 128 << 10;
  text.reserve(expected);
  for (;;) {
    const size_t have = text.size();
    if (text.capacity() - have < kPiece) text.reserve(text.capacity() * 2);
    text.resize(have + kPiece);
    const ssize_t n = read(fd, text.data() + have, kPiece);
    text.resize(have + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n <= 0) break;
  }
  close(fd);
  return text;
}

}  // namespace spoor::kernelsrc
