// spoor::compress's huge-page buffers: megabyte buffers start on a 2 MiB
// boundary and the kernel is asked to back them with huge pages where
// those are the cheaper kind here (each process measures once), which is
// what keeps the recorder's page faults (and so its drain's CPU) down.
#include "spoor/compress/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace spoor::testing {
namespace {

using compress::choose_huge_pages;
using compress::kDearSmallPagesNs;
using compress::kHugePageBytes;
using compress::PageBuffer;

// The system's THP mode: "always", "madvise" or "never" (the bracketed
// word of /sys/kernel/mm/transparent_hugepage/enabled), "" if absent.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// The THPeligible field of the mapping of /proc/self/smaps that holds
// `p`: 1 when faults there may map huge pages. -1 if not found.
int thp_eligible(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &start, &end) == 2) {
      inside = at >= start && at < end;
      continue;
    }
    int value = 0;
    if (inside && std::sscanf(line.c_str(), "THPeligible: %d", &value) == 1) return value;
  }
  return -1;
}

TEST(HugePages, MegabyteBuffersStartOnAHugePageAndAskForThePagesChosen) {
  PageBuffer run;
  run.reserve(5 * kHugePageBytes + 12345);
  ASSERT_NE(run.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(run.data()) % kHugePageBytes, 0u);
  run.assign(run.capacity(), 0x5a);  // usable to its last byte
  EXPECT_EQ(run.back(), 0x5a);
  const std::string mode = thp_mode();
  if (mode != "madvise" && mode != "always") GTEST_SKIP() << "transparent huge pages are '" << mode << "' here";
  // Under "madvise", eligible only because the buffer asked; under
  // "always", not where it asked for small pages.
  const int eligible = compress::huge_pages_pay() ? 1 : 0;
  EXPECT_EQ(thp_eligible(run.data()), eligible);
  EXPECT_EQ(thp_eligible(run.data() + run.size() - 1), eligible);
}

// The cost choose_huge_pages is given, per 2 MiB of small pages, and how
// often it was asked for.
struct FakeCost {
  static inline double small = 0;
  static inline int asked = 0;
  static double small_cost() { return ++asked, small; }
  static bool choose(const char* setting, double small_ns) {
    small = small_ns;
    asked = 0;
    return choose_huge_pages(setting, small_cost);
  }
};

TEST(HugePages, HugePagesWhereSmallPagesAreDear) {
  // ~2 us a small page: small pages.
  EXPECT_FALSE(FakeCost::choose(nullptr, 512 * 2000.0));
  EXPECT_EQ(FakeCost::asked, 1);
  EXPECT_FALSE(FakeCost::choose(nullptr, kDearSmallPagesNs - 1));
  // 13 us a small page: huge pages.
  EXPECT_TRUE(FakeCost::choose(nullptr, 512 * 13000.0));
  EXPECT_TRUE(FakeCost::choose(nullptr, kDearSmallPagesNs));
  // Nothing measured (no memory to map): huge pages, as before there was
  // a choice.
  EXPECT_TRUE(FakeCost::choose(nullptr, -1));
}

TEST(HugePages, TheSettingDecidesWithoutMeasuring) {
  EXPECT_TRUE(FakeCost::choose("1", 512 * 2000.0));
  EXPECT_FALSE(FakeCost::choose("0", 512 * 13000.0));
  EXPECT_EQ(FakeCost::asked, 0);
  // Anything else is no setting.
  EXPECT_FALSE(FakeCost::choose("yes", 512 * 2000.0));
  EXPECT_EQ(FakeCost::asked, 1);
}

TEST(HugePages, FreshSmallPagesAreTimed) {
  // A real first touch of mapped memory.
  EXPECT_GT(compress::small_pages_cost_ns(), 0);
}

TEST(HugePages, SmallBuffersAreOrdinaryAllocations) {
  PageBuffer small(1000, 7);
  small.push_back(8);
  EXPECT_EQ(small.size(), 1001u);
  EXPECT_EQ(small.front(), 7);
  EXPECT_EQ(small.back(), 8);
  // Growing past 2 MiB moves the bytes into a huge-page buffer.
  small.resize(3 * kHugePageBytes, 9);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(small[999], 7);
  EXPECT_EQ(small[1000], 8);
  EXPECT_EQ(small.back(), 9);
}

}  // namespace
}  // namespace spoor::testing
