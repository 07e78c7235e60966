#include "spoor/kernelsrc/kallsyms_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "spoor/kernelsrc/kernel_symbols.h"

namespace spoor::kernelsrc {
namespace {

constexpr std::string_view kMagic = "spoor-kallsyms 1";

std::string boot_id() {
  std::string id = read_text_file("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

// The address of the text symbol `name` ("_stext"), 0 when absent.
uint64_t symbol_address(std::string_view symbols, std::string_view name) {
  for (const char type : {'T', 't'}) {
    const std::string tail = std::string(" ") + type + " " + std::string(name) + "\n";
    const size_t at = symbols.find(tail);
    if (at == std::string_view::npos) continue;
    const size_t line = symbols.rfind('\n', at);
    const size_t start = line == std::string_view::npos ? 0 : line + 1;
    return std::strtoull(std::string(symbols.substr(start, at - start)).c_str(), nullptr, 16);
  }
  return 0;
}

struct Range {
  uint64_t begin, end;
};

// Each module's core: "NAME SIZE REFS DEPS STATE 0xADDRESS [TAINTS]".
std::vector<Range> module_ranges(const std::string& modules) {
  std::vector<Range> ranges;
  std::istringstream lines(modules);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, refs, deps, state, address;
    uint64_t size = 0;
    if (!(words >> name >> size >> refs >> deps >> state >> address)) continue;
    const uint64_t base = std::strtoull(address.c_str(), nullptr, 16);
    if (base != 0 && size != 0) ranges.push_back({base, base + size});
  }
  return ranges;
}

}  // namespace

KallsymsText read_kallsyms_text() {
  KallsymsText k;
  k.modules = read_text_file("/proc/modules");
  auto text = std::make_shared<const std::string>(read_kallsyms());
  k.symbols = *text;
  k.storage = std::move(text);
  return k;
}

bool kallsyms_cover(const KallsymsText& k, const std::vector<uint64_t>& addresses) {
  const uint64_t stext = symbol_address(k.symbols, "_stext"), etext = symbol_address(k.symbols, "_etext");
  const std::vector<Range> modules = module_ranges(k.modules);
  for (const uint64_t a : addresses) {
    bool in = stext != 0 && stext <= a && a < etext;
    for (size_t i = 0; !in && i < modules.size(); ++i) in = modules[i].begin <= a && a < modules[i].end;
    if (!in) return false;
  }
  return true;
}

bool kallsyms_stale_for(const KallsymsText& k, const std::vector<uint64_t>& addresses) {
  if (kallsyms_cover(k, addresses)) return false;
  return k.from_cache || k.modules != read_text_file("/proc/modules");
}

// The file: "spoor-kallsyms 1 BOOT_ID MODULES_BYTES SYMBOLS_BYTES\n", then
// the two texts.
std::optional<KallsymsText> load_kallsyms_cache(const std::string& path) {
  if (path.empty()) return std::nullopt;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  void* map = fstat(fd, &st) == 0 && st.st_size > 0
                  ? mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return std::nullopt;
  const auto bytes = static_cast<size_t>(st.st_size);
  std::shared_ptr<const void> storage(map, [bytes](const void* p) { munmap(const_cast<void*>(p), bytes); });
  const std::string_view file(static_cast<const char*>(map), bytes);
  const size_t eol = file.find('\n');
  if (eol == std::string::npos || file.compare(0, kMagic.size(), kMagic) != 0) return std::nullopt;
  std::istringstream header(std::string(file.substr(kMagic.size(), eol - kMagic.size())));
  std::string id;
  size_t modules_bytes = 0, symbols_bytes = 0;
  if (!(header >> id >> modules_bytes >> symbols_bytes)) return std::nullopt;
  // Sizes checked one by one first: a damaged header must not make them wrap.
  if (modules_bytes > file.size() || symbols_bytes > file.size() ||
      file.size() != eol + 1 + modules_bytes + symbols_bytes || id != boot_id())
    return std::nullopt;
  KallsymsText k;
  k.modules = file.substr(eol + 1, modules_bytes);
  if (k.modules != read_text_file("/proc/modules")) return std::nullopt;
  k.symbols = file.substr(eol + 1 + modules_bytes);  // read where it lies, not copied
  k.storage = std::move(storage);
  k.from_cache = true;
  return k;
}

bool store_kallsyms_cache(const std::string& path, const KallsymsText& k) {
  if (path.empty() || symbol_address(k.symbols, "_stext") == 0) return false;
  const std::string id = boot_id();
  if (id.empty()) return false;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string temporary = path + ".new." + std::to_string(getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string header = std::string(kMagic) + " " + id + " " + std::to_string(k.modules.size()) + " " +
                             std::to_string(k.symbols.size()) + "\n";
  bool ok = true;
  for (const std::string_view part : {std::string_view(header), std::string_view(k.modules), k.symbols}) {
    size_t done = 0;
    while (ok && done < part.size()) {
      const ssize_t n = write(fd, part.data() + done, part.size() - done);
      if (n <= 0) ok = false;
      else done += static_cast<size_t>(n);
    }
  }
  ok = close(fd) == 0 && ok;
  if (ok) ok = std::rename(temporary.c_str(), path.c_str()) == 0;
  if (!ok) std::remove(temporary.c_str());
  return ok;
}

}  // namespace spoor::kernelsrc
