#include "spoor/kernelsrc/kernel_symbols.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace spoor::kernelsrc {
namespace {

bool parse_hex(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

// The next space-separated word of `line` from `at`, or "".
std::string_view word(std::string_view line, size_t& at) {
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
  const size_t start = at;
  while (at < line.size() && line[at] != ' ' && line[at] != '\t') ++at;
  return line.substr(start, at - start);
}

}  // namespace

std::vector<KernelSymbol> parse_kallsyms(std::string_view text) {
  std::vector<KernelSymbol> out;
  bool any_address = false;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    size_t at = 0;
    uint64_t address = 0;
    if (!parse_hex(word(line, at), &address)) continue;
    const std::string_view type = word(line, at);
    if (type.size() != 1 || (type[0] != 't' && type[0] != 'T' && type[0] != 'w' && type[0] != 'W')) continue;
    const std::string_view name = word(line, at);
    if (name.empty()) continue;
    std::string_view module = word(line, at);
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']') module = module.substr(1, module.size() - 2);
    else module = {};
    any_address |= address != 0;
    out.push_back({address, std::string(name), std::string(module)});
  }
  if (!any_address) return {};
  std::stable_sort(out.begin(), out.end(), [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
  return out;
}

std::vector<KernelSymbol> read_kallsyms(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_kallsyms(text);
}

std::vector<KernelSymbol> symbols_holding(const std::vector<KernelSymbol>& table, std::vector<uint64_t> addresses) {
  std::vector<KernelSymbol> out;
  std::sort(addresses.begin(), addresses.end());
  size_t last = table.size();  // the entry last written, none yet
  for (const uint64_t a : addresses) {
    auto it = std::upper_bound(table.begin(), table.end(), a,
                               [](uint64_t v, const KernelSymbol& s) { return v < s.address; });
    if (it == table.begin()) continue;
    const size_t i = static_cast<size_t>(std::prev(it) - table.begin());
    if (i == last) continue;
    out.push_back(table[i]);
    last = i;
  }
  return out;
}

}  // namespace spoor::kernelsrc
