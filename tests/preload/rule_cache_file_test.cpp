// The unwind rule cache file (preload/record/rule_cache_file.h): rules a
// recording's store published are written, read into the next store's
// kept part, and a file or store that does not add up is ignored.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../shared_rules.h"
#include "rule_cache_file.h"
#include "rule_store.h"
#include "run_command.h"

namespace {

namespace preload = spoor::preload;
using spoor::record::create_rule_store;
using spoor::record::load_rule_cache;
using spoor::record::save_rule_cache;

constexpr size_t kStoreBytes = preload::shared_rules_bytes();

// A store (create_rule_store) mapped, as a traced process maps it.
struct Store {
  int fd = create_rule_store();
  size_t mapped = 0;
  uint8_t* bytes = nullptr;
  Store() {
    struct stat st;
    EXPECT_GE(fd, 0);
    EXPECT_EQ(fstat(fd, &st), 0);
    mapped = static_cast<size_t>(st.st_size);
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(p, MAP_FAILED);
    bytes = static_cast<uint8_t*>(p);
  }
  ~Store() {
    munmap(bytes, mapped);
    close(fd);
  }
  preload::SharedRulesHeader& header() { return *reinterpret_cast<preload::SharedRulesHeader*>(bytes); }
  // Publishes a rule in slot `i`, as a process does.
  void publish(size_t i, uint64_t module, uint64_t offset, uint64_t rule) {
    auto* slot = reinterpret_cast<preload::SharedRuleSlot*>(bytes + sizeof(preload::SharedRulesHeader)) + i;
    slot->offset.store(offset);
    slot->rule.store(rule);
    slot->module.store(module);
  }
  size_t size() const {
    struct stat st;
    fstat(fd, &st);
    return static_cast<size_t>(st.st_size);
  }
  std::vector<preload::KeptRule> kept() const {
    const auto& h = *reinterpret_cast<const preload::SharedRulesHeader*>(bytes);
    std::vector<preload::KeptRule> rules(h.kept_count);
    const ssize_t want = static_cast<ssize_t>(rules.size() * sizeof(preload::KeptRule));
    if (want > 0) {
      EXPECT_EQ(pread(fd, rules.data(), static_cast<size_t>(want), static_cast<off_t>(sizeof h + h.kept_offset)), want);
    }
    return rules;
  }
};

class RuleCacheFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string dir = spoor::test::temp_path("rule-cache-file");
  std::string path = dir + "/unwind-rules";
};

TEST_F(RuleCacheFile, RulesPublishedInOneStoreAreKeptInTheNext) {
  {
    Store first;
    first.publish(7, 0xAAAA, 0x40, 0x1111);
    first.publish(3, 0xAAAA, 0x10, 0x2222);
    first.publish(900, 0xBBBB, 0x20, 0x3333);
    ASSERT_EQ(save_rule_cache(first.fd, path), 3);
  }
  Store second;
  ASSERT_EQ(load_rule_cache(second.fd, path), 3u);
  std::vector<std::array<uint64_t, 3>> kept;
  for (const preload::KeptRule& k : second.kept()) kept.push_back({k.module, k.offset, k.rule});
  // Sorted by module, then offset: the processes search them.
  EXPECT_EQ(kept, (std::vector<std::array<uint64_t, 3>>{
                      {0xAAAA, 0x10, 0x2222}, {0xAAAA, 0x40, 0x1111}, {0xBBBB, 0x20, 0x3333}}));
  EXPECT_EQ(second.header().kept_offset, kStoreBytes - sizeof(preload::SharedRulesHeader));
  EXPECT_EQ(second.size(), kStoreBytes + 3 * sizeof(preload::KeptRule));

  // A recording that used only kept rules leaves the file as it was.
  second.publish(11, 0xAAAA, 0x40, 0x1111);
  const auto written = std::filesystem::last_write_time(path);
  EXPECT_EQ(save_rule_cache(second.fd, path), 3);
  EXPECT_EQ(std::filesystem::last_write_time(path), written);
}

TEST_F(RuleCacheFile, AFileCutShortIsNotRead) {
  {
    Store first;
    for (size_t i = 0; i < 10; ++i) first.publish(i * 64, 0xCCCC, 0x100 * i, 0x10 + i);
    ASSERT_EQ(save_rule_cache(first.fd, path), 10);
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5 * sizeof(preload::KeptRule));
  Store store;
  EXPECT_EQ(load_rule_cache(store.fd, path), 0u);
  EXPECT_EQ(store.header().kept_count, 0u);
  EXPECT_EQ(store.size(), kStoreBytes) << "the store as it was made";
}

TEST_F(RuleCacheFile, AStoreClaimingMoreKeptRulesThanItHoldsIsSavedWithoutThem) {
  Store store;
  store.publish(5, 0xDDDD, 0x8, 0x77);
  // A traced process maps the header writable: what it says is checked
  // against the memfd's size before the kept rules are read.
  store.header().kept_offset = kStoreBytes - sizeof(preload::SharedRulesHeader);
  store.header().kept_count = 1000;
  ASSERT_EQ(save_rule_cache(store.fd, path), 1);
  Store next;
  ASSERT_EQ(load_rule_cache(next.fd, path), 1u);
  EXPECT_EQ(next.kept()[0].module, 0xDDDDu);
}

TEST_F(RuleCacheFile, NoFileIsNothingKept) {
  Store store;
  EXPECT_EQ(load_rule_cache(store.fd, dir + "/missing"), 0u);
  EXPECT_EQ(store.size(), kStoreBytes);
}

}  // namespace
