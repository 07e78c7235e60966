#include "rule_cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../shared_rules.h"

namespace spoor::record {
namespace {

constexpr uint32_t kMagic = 0x43525053u;  // "SPRC"
constexpr uint32_t kVersion = 1;

struct Header {
  uint32_t magic;
  uint32_t version;
  uint32_t rule_format;  // preload::kUnwindRuleFormat
  uint32_t reserved;
  uint64_t count;
  uint64_t checksum;  // FNV-1a of the entries' bytes
};
static_assert(sizeof(Header) == 32);

struct Entry {
  uint64_t module, offset, rule;
};
static_assert(sizeof(Entry) == 24);

uint64_t checksum(const Entry* entries, size_t count) {
  uint64_t h = 0xCBF29CE484222325ull;
  const auto* p = reinterpret_cast<const unsigned char*>(entries);
  for (size_t i = 0; i < count * sizeof(Entry); ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return h;
}

// The store memfd, mapped; null on failure.
preload::SharedRulesHeader* map_store(int store_fd) {
  void* p = mmap(nullptr, preload::shared_rules_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, store_fd, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* header = static_cast<preload::SharedRulesHeader*>(p);
  if (header->magic != preload::kSharedRulesMagic || header->version != preload::kSharedRulesVersion ||
      header->slot_count != (uint64_t{1} << preload::kSharedRuleSlotsLog2)) {
    munmap(p, preload::shared_rules_bytes());
    return nullptr;
  }
  return header;
}

// As the shim's publish_shared_rule (shim/shared_rule_store.cpp), marked
// as the cache's: processes may be publishing at the same time.
void insert(preload::SharedRuleSlot* slots, uint64_t mask, const Entry& e) {
  uint64_t i = preload::shared_rule_first_slot(e.module, e.offset);
  for (int probe = 0; probe < preload::kSharedRuleProbes; ++probe, ++i) {
    preload::SharedRuleSlot& s = slots[i & mask];
    uint64_t seen = s.module.load(std::memory_order_acquire);
    if (seen == preload::kSharedRuleFree &&
        s.module.compare_exchange_strong(seen, preload::kSharedRuleClaimed, std::memory_order_acquire,
                                         std::memory_order_acquire)) {
      s.offset.store(e.offset, std::memory_order_relaxed);
      s.rule.store(e.rule, std::memory_order_relaxed);
      s.from_cache = 1;
      s.module.store(e.module, std::memory_order_release);
      return;
    }
    if (seen == e.module && s.offset.load(std::memory_order_relaxed) == e.offset) return;
  }
}

bool read_all(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// mkdir -p, each new directory of mode 0700.
bool make_directories(const std::string& dir) {
  if (dir.empty()) return true;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  const size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_directories(dir.substr(0, slash))) return false;
  return mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
}

// The store's published slots, read with pread over the memfd's data
// only (SEEK_DATA): its unwritten pages are never faulted in.
template <typename Fn>
void each_published_slot(int store_fd, Fn fn) {
  const off_t begin = static_cast<off_t>(sizeof(preload::SharedRulesHeader));
  const off_t end = static_cast<off_t>(preload::shared_rules_bytes());
  std::vector<preload::SharedRuleSlot> chunk(2048);  // 64 KiB
  off_t at = begin;
  while (at < end) {
    off_t data = lseek(store_fd, at, SEEK_DATA);
    if (data < 0) break;  // no data beyond `at` (ENXIO)
    if (data < begin) data = begin;
    off_t hole = lseek(store_fd, data, SEEK_HOLE);
    if (hole < 0 || hole > end) hole = end;
    // Whole slots: a slot never straddles a page, both being powers of two.
    data -= (data - begin) % static_cast<off_t>(sizeof(preload::SharedRuleSlot));
    while (data < hole) {
      const size_t want = std::min<size_t>(chunk.size() * sizeof(preload::SharedRuleSlot),
                                           static_cast<size_t>(hole - data));
      const ssize_t n = pread(store_fd, chunk.data(), want, data);
      if (n <= 0) return;
      const size_t slots = static_cast<size_t>(n) / sizeof(preload::SharedRuleSlot);
      for (size_t i = 0; i < slots; ++i) {
        const preload::SharedRuleSlot& s = chunk[i];
        const uint64_t module = s.module.load(std::memory_order_relaxed);
        const uint64_t rule = s.rule.load(std::memory_order_relaxed);
        if (module > preload::kSharedRuleClaimed && rule != 0)
          fn(Entry{module, s.offset.load(std::memory_order_relaxed), rule}, s.from_cache != 0);
      }
      if (slots == 0) return;
      data += static_cast<off_t>(slots * sizeof(preload::SharedRuleSlot));
    }
    at = hole;
  }
}

}  // namespace

std::string default_rule_cache_path() {
  if (const char* set = std::getenv("SPOOR_RULE_CACHE"); set != nullptr)
    return std::strcmp(set, "off") == 0 ? std::string() : std::string(set);
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/spoor/unwind-rules";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/spoor/unwind-rules";
  return "";
}

size_t load_rule_cache(int store_fd, const std::string& path) {
  if (store_fd < 0 || path.empty()) return 0;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  Header h{};
  std::vector<Entry> entries;
  bool ok = read_all(fd, &h, sizeof h) && h.magic == kMagic && h.version == kVersion &&
            h.rule_format == preload::kUnwindRuleFormat && h.count <= kMaxCachedRules;
  if (ok) {
    entries.resize(h.count);
    ok = read_all(fd, entries.data(), entries.size() * sizeof(Entry)) && checksum(entries.data(), entries.size()) == h.checksum;
  }
  close(fd);
  if (!ok) return 0;
  preload::SharedRulesHeader* header = map_store(store_fd);
  if (header == nullptr) return 0;
  auto* slots = reinterpret_cast<preload::SharedRuleSlot*>(header + 1);
  size_t loaded = 0;
  for (const Entry& e : entries) {
    if (e.module <= preload::kSharedRuleClaimed || e.rule == 0) continue;
    insert(slots, header->slot_count - 1, e);
    ++loaded;
  }
  munmap(header, preload::shared_rules_bytes());
  return loaded;
}

long save_rule_cache(int store_fd, const std::string& path) {
  if (store_fd < 0 || path.empty()) return -1;
  std::vector<Entry> fresh, kept;
  each_published_slot(store_fd, [&](const Entry& e, bool from_cache) { (from_cache ? kept : fresh).push_back(e); });
  std::vector<Entry> entries = std::move(fresh);
  for (const Entry& e : kept) {
    if (entries.size() >= kMaxCachedRules) break;
    entries.push_back(e);
  }
  if (entries.size() > kMaxCachedRules) entries.resize(kMaxCachedRules);
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && !make_directories(path.substr(0, slash))) return -1;
  const std::string temporary = path + ".tmp-" + std::to_string(getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  const Header h{kMagic, kVersion, preload::kUnwindRuleFormat, 0, entries.size(), checksum(entries.data(), entries.size())};
  const bool written = write_all(fd, &h, sizeof h) && write_all(fd, entries.data(), entries.size() * sizeof(Entry));
  if (close(fd) != 0 || !written || rename(temporary.c_str(), path.c_str()) != 0) {
    unlink(temporary.c_str());
    return -1;
  }
  return static_cast<long>(entries.size());
}

}  // namespace spoor::record
