// kallsyms_cache.h: what a kept /proc/kallsyms covers, and when a copy is
// read back.
#include "spoor/kernelsrc/kallsyms_cache.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace spoor::kernelsrc {
namespace {

KallsymsText sample_text() {
  KallsymsText k;
  k.symbols =
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 T do_one\n"
      "ffffffff81000200 t do_two\n"
      "ffffffff82000000 T _etext\n"
      "ffffffff83000000 T init_only\n"
      "ffffffffc0001000 t ext4_read\t[ext4]\n";
  k.modules = "ext4 8192 1 - Live 0xffffffffc0001000\n";
  return k;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A path in the temporary directory, this test process's own.
std::string temp_path(const std::string& name) {
  return spoor::test::test_temp_path(name);
}

std::string live_modules() { return read_all("/proc/modules"); }

TEST(KallsymsCache, CoversTheKernelsTextAndItsModulesOnly) {
  const KallsymsText k = sample_text();
  EXPECT_TRUE(kallsyms_cover(k, {0xffffffff81000150, 0xffffffff81000000}));
  EXPECT_TRUE(kallsyms_cover(k, {0xffffffffc0001800})) << "inside ext4's 8 KiB";
  EXPECT_FALSE(kallsyms_cover(k, {0xffffffffc0003000})) << "past ext4: a module loaded later, a BPF program";
  EXPECT_FALSE(kallsyms_cover(k, {0xffffffff81000150, 0xffffffff82000000})) << "_etext ends the text";
  EXPECT_FALSE(kallsyms_cover(k, {0xffffffff83000010})) << "init text is freed after boot";
  KallsymsText hidden = k;  // kptr_restrict: every address reads 0
  hidden.symbols = "0000000000000000 T _stext\n0000000000000000 T do_one\n0000000000000000 T _etext\n";
  hidden.modules = "ext4 8192 1 - Live 0x0000000000000000\n";
  EXPECT_FALSE(kallsyms_cover(hidden, {0}));
  EXPECT_FALSE(kallsyms_cover(hidden, {0xffffffff81000150}));
}

// Read again only where that can name more: not a text just read (the
// same would come back), but a kept copy, or one the modules changed since.
TEST(KallsymsCache, ReadAgainForAnAddressOutsideOnlyWhereThatCanNameIt) {
  KallsymsText fresh = sample_text();
  fresh.modules = live_modules();
  const std::vector<uint64_t> inside = {0xffffffff81000150}, outside = {0xffffffffc0103000};
  EXPECT_FALSE(kallsyms_stale_for(fresh, inside));
  EXPECT_FALSE(kallsyms_stale_for(fresh, outside)) << "read during the recording, modules as now";
  KallsymsText kept = fresh;
  kept.from_cache = true;
  EXPECT_FALSE(kallsyms_stale_for(kept, inside));
  EXPECT_TRUE(kallsyms_stale_for(kept, outside)) << "a kept copy knows no BPF program of today";
  KallsymsText older = fresh;
  older.modules += "spoor_gone 4096 0 - Live 0xffffffffc0100000\n";
  EXPECT_TRUE(kallsyms_stale_for(older, outside)) << "the modules changed since the read";
}

TEST(KallsymsCache, ACopyIsReadBackInTheSameBootWithTheSameModules) {
  const std::string path = temp_path("kallsyms-cache/kallsyms");
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  KallsymsText k = sample_text();
  k.modules = live_modules();  // as /proc/modules reads now
  ASSERT_TRUE(store_kallsyms_cache(path, k));
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::optional<KallsymsText> back = load_kallsyms_cache(path);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->from_cache);
  EXPECT_EQ(back->symbols, k.symbols);
  EXPECT_EQ(back->modules, k.modules);

  // Another boot: its first line names another boot_id.
  std::string file = read_all(path);
  std::string other = file;
  const size_t id = other.find(' ', other.find(' ') + 1) + 1;  // after "spoor-kallsyms 1 "
  other[id] = other[id] == '0' ? '1' : '0';
  std::ofstream(path, std::ios::binary | std::ios::trunc) << other;
  EXPECT_FALSE(load_kallsyms_cache(path).has_value()) << "written in another boot";

  // This boot's header whose sizes add up only by wrapping around: 2^64 - 1
  // and 101 past a 100-byte body.
  const std::string this_boot = file.substr(0, file.find(' ', file.find(' ', file.find(' ') + 1) + 1) + 1);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << this_boot << "18446744073709551615 101\n" << std::string(100, 'x');
  EXPECT_FALSE(load_kallsyms_cache(path).has_value()) << "a damaged header";

  // Cut short.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << file.substr(0, file.size() - 10);
  EXPECT_FALSE(load_kallsyms_cache(path).has_value()) << "a damaged copy";

  // Other modules then than now.
  KallsymsText then = sample_text();
  then.modules = live_modules() + "spoor_gone 4096 0 - Live 0xffffffffc0100000\n";
  ASSERT_TRUE(store_kallsyms_cache(path, then));
  EXPECT_FALSE(load_kallsyms_cache(path).has_value()) << "a module unloaded since";

  EXPECT_FALSE(load_kallsyms_cache(path + ".missing").has_value());
  EXPECT_FALSE(load_kallsyms_cache("").has_value());
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(KallsymsCache, HiddenAddressesAreNotKept) {
  const std::string path = temp_path("kallsyms-hidden");
  std::filesystem::remove(path);
  KallsymsText hidden;
  hidden.symbols = "0000000000000000 T _stext\n0000000000000000 T do_one\n0000000000000000 T _etext\n";
  EXPECT_FALSE(store_kallsyms_cache(path, hidden));
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace spoor::kernelsrc
