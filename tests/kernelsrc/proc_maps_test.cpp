#include "spoor/kernelsrc/proc_maps.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>

namespace spoor::kernelsrc {
namespace {

TEST(ProcMaps, ParsesFileAnonymousAndSpecialMappings) {
  const auto maps = parse_proc_maps(
      "55d0c6a00000-55d0c6a01000 r-xp 00001000 fe:01 1234   /usr/bin/prog with space\n"
      "7ffd1c5e0000-7ffd1c5e2000 r-xp 00000000 00:00 0                          [vdso]\n"
      "7f0000000000-7f0000021000 rw-s 00000000 00:00 0 \n"
      "garbage\n");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].start, 0x55d0c6a00000u);
  EXPECT_EQ(maps[0].length, 0x1000u);
  EXPECT_EQ(maps[0].pgoff, 0x1000u);
  EXPECT_EQ(maps[0].prot, static_cast<uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(maps[0].flags, static_cast<uint32_t>(MAP_PRIVATE));
  EXPECT_EQ(maps[0].path, "/usr/bin/prog with space");
  EXPECT_EQ(maps[1].path, "[vdso]");
  EXPECT_EQ(maps[2].path, "");
  EXPECT_EQ(maps[2].flags, static_cast<uint32_t>(MAP_SHARED));
}

TEST(ProcMaps, ThisTestsOwnExecutableIsMappedWithItsBuildId) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = 0;
  bool found = false;
  for (const Mapping& m : executable_mappings(getpid())) found |= m.path == self;
  EXPECT_TRUE(found);
  // The GNU build ID note gcc and clang write by default (20 bytes of SHA-1).
  EXPECT_EQ(file_build_id(self).size(), 20u);
  EXPECT_TRUE(file_build_id("/nonexistent").empty());
}

}  // namespace
}  // namespace spoor::kernelsrc
