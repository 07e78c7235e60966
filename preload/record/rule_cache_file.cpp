#include "rule_cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
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
  uint64_t checksum;  // FNV-1a of the entries' words
};
static_assert(sizeof(Header) == 32);

using Entry = preload::KeptRule;

// FNV-1a over the entries' words (a damaged file, not an adversary).
uint64_t checksum(const Entry* entries, size_t count) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < count; ++i)
    for (const uint64_t w : {entries[i].module, entries[i].offset, entries[i].rule}) h = (h ^ w) * 0x100000001B3ull;
  return h;
}

constexpr auto before = preload::kept_rule_before;

// Where the store's slots end and its kept rules begin, from the start
// of the memfd.
constexpr off_t kSlotsEnd = static_cast<off_t>(preload::shared_rules_bytes());
// The store header's kept_offset for them (it counts from the header's end).
constexpr uint64_t kKeptOffset = static_cast<uint64_t>(kSlotsEnd) - sizeof(preload::SharedRulesHeader);

bool pread_all(int fd, void* data, size_t size, off_t at) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = pread(fd, p, size, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// `size` bytes of `from` at `at` to the store's kept rules, copied by the
// kernel from the file's pages to the store's: a buffer of the recorder's
// for them would be fresh pages the kernel zeroes first, ~200 for a full
// file (~2-3 ms on this virtual machine: bench/RESULTS.md). False when the
// file ends early.
bool copy_to_kept(int store_fd, int from, off_t at, size_t size) {
  if (lseek(store_fd, kSlotsEnd, SEEK_SET) != kSlotsEnd) return false;
  while (size > 0) {
    const ssize_t n = sendfile(store_fd, from, &at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The store's kept rules, read where they lie (mapped, not copied out).
// None when the store is too short to hold `count` of them: the traced
// processes map its header writable, and a mapping read past the memfd's
// end would kill the recorder (SIGBUS).
class KeptView {
 public:
  KeptView(int store_fd, size_t count) {
    struct stat st;
    if (count == 0 || fstat(store_fd, &st) != 0 || st.st_size < kSlotsEnd ||
        static_cast<uint64_t>(st.st_size - kSlotsEnd) / sizeof(Entry) < count)
      return;
    const off_t page = static_cast<off_t>(sysconf(_SC_PAGESIZE));
    const off_t start = kSlotsEnd - kSlotsEnd % page;
    length_ = static_cast<size_t>(kSlotsEnd - start) + count * sizeof(Entry);
    void* p = mmap(nullptr, length_, PROT_READ, MAP_SHARED, store_fd, start);
    if (p == MAP_FAILED) return;
    map_ = p;
    entries_ = {reinterpret_cast<const Entry*>(static_cast<const uint8_t*>(p) + (kSlotsEnd - start)), count};
  }
  ~KeptView() {
    if (map_ != nullptr) munmap(map_, length_);
  }
  KeptView(const KeptView&) = delete;
  KeptView& operator=(const KeptView&) = delete;
  std::span<const Entry> entries() const { return entries_; }

 private:
  void* map_ = nullptr;
  size_t length_ = 0;
  std::span<const Entry> entries_;
};

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
  const off_t end = kSlotsEnd;
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
          fn(Entry{module, s.offset.load(std::memory_order_relaxed), rule});
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
  bool ok = pread_all(fd, &h, sizeof h, 0) && h.magic == kMagic && h.version == kVersion &&
            h.rule_format == preload::kUnwindRuleFormat && h.count <= kMaxCachedRules && h.count > 0;
  // After the slots, checked there; then the header's two fields: no
  // process has the store yet (it is handed over with the first region).
  const size_t count = ok ? static_cast<size_t>(h.count) : 0;
  ok = ok && ftruncate(store_fd, kSlotsEnd + static_cast<off_t>(count * sizeof(Entry))) == 0 &&
       copy_to_kept(store_fd, fd, sizeof h, count * sizeof(Entry));
  close(fd);
  if (ok) {
    const KeptView kept(store_fd, count);
    const std::span<const Entry> entries = kept.entries();
    ok = entries.size() == count && checksum(entries.data(), entries.size()) == h.checksum;
    // Strictly sorted, as written: the processes search them.
    for (size_t i = 1; ok && i < entries.size(); ++i) ok = before(entries[i - 1], entries[i]);
  }
  const uint64_t fields[2] = {kKeptOffset, count};
  if (!ok || pwrite(store_fd, fields, sizeof fields, offsetof(preload::SharedRulesHeader, kept_offset)) != sizeof fields) {
    (void)ftruncate(store_fd, kSlotsEnd);  // damaged or cut short: nothing kept
    return 0;
  }
  return count;
}

long save_rule_cache(int store_fd, const std::string& path) {
  if (store_fd < 0 || path.empty()) return -1;
  // The rules this recording published (those it built, and the kept ones
  // it used), and the kept ones.
  std::vector<Entry> published;
  each_published_slot(store_fd, [&](const Entry& e) { published.push_back(e); });
  preload::SharedRulesHeader header{};
  const bool has_kept = pread(store_fd, &header, sizeof header, 0) == static_cast<ssize_t>(sizeof header) &&
                        header.kept_count <= kMaxCachedRules &&
                        header.kept_offset == kKeptOffset;
  const KeptView kept_view(store_fd, has_kept ? static_cast<size_t>(header.kept_count) : 0);
  const std::span<const Entry> kept = kept_view.entries();
  std::sort(published.begin(), published.end(), before);
  published.erase(std::unique(published.begin(), published.end(),
                              [](const Entry& a, const Entry& b) { return !before(a, b) && !before(b, a); }),
                  published.end());
  // Nothing new (a program whose every rule was kept): the file stays.
  const auto in_kept = [&](const Entry& e) { return std::binary_search(kept.begin(), kept.end(), e, before); };
  if (!kept.empty() && std::all_of(published.begin(), published.end(), in_kept)) return static_cast<long>(kept.size());
  // This recording's rules first, then the kept ones it did not use, up
  // to kMaxCachedRules; sorted, as processes search them.
  std::vector<Entry> keep = std::move(published);
  if (keep.size() > kMaxCachedRules) keep.resize(kMaxCachedRules);
  const size_t ours = keep.size();
  for (const Entry& e : kept) {
    if (keep.size() >= kMaxCachedRules) break;
    if (!std::binary_search(keep.begin(), keep.begin() + static_cast<long>(ours), e, before)) keep.push_back(e);
  }
  std::inplace_merge(keep.begin(), keep.begin() + static_cast<long>(ours), keep.end(), before);

  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && !make_directories(path.substr(0, slash))) return -1;
  const std::string temporary = path + ".tmp-" + std::to_string(getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  const Header h{kMagic, kVersion, preload::kUnwindRuleFormat, 0, keep.size(), checksum(keep.data(), keep.size())};
  const bool written = write_all(fd, &h, sizeof h) && write_all(fd, keep.data(), keep.size() * sizeof(Entry));
  if (close(fd) != 0 || !written || rename(temporary.c_str(), path.c_str()) != 0) {
    unlink(temporary.c_str());
    return -1;
  }
  return static_cast<long>(keep.size());
}

}  // namespace spoor::record
