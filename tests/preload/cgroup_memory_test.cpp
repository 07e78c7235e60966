// The memory limit spoor record reads from its cgroup (v1 and v2), and
// the packing it sizes from it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "../../preload/record/cgroup_memory.h"
#include "../../preload/record/packing_budget.h"

namespace {

namespace fs = std::filesystem;
using spoor::record::CgroupSources;
using spoor::record::cgroup_memory_limit;
using spoor::record::packing_within_memory;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A directory tree standing for the root of the file system.
class FakeRoot {
 public:
  FakeRoot() : dir_(fs::temp_directory_path() / ("spoor-cgroup-" + std::to_string(getpid()) + "-" + std::to_string(++count_))) {
    fs::create_directories(dir_);
  }
  ~FakeRoot() { fs::remove_all(dir_); }
  void write(const std::string& path, const std::string& text) const {
    const fs::path p = dir_ / path.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string prefix() const { return dir_.string(); }

 private:
  static inline int count_ = 0;
  fs::path dir_;
};

const std::string kV2Mount = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
const std::string kV1Mounts =
    "31 23 0:28 / /sys/fs/cgroup tmpfs rw - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "36 31 0:33 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";

TEST(CgroupMemory, V2TakesTheSmallestOfMaxAndHighUpTheTree) {
  FakeRoot root;
  root.write("/sys/fs/cgroup/app.slice/memory.max", "536870912\n");
  root.write("/sys/fs/cgroup/app.slice/job.scope/memory.max", "max\n");
  root.write("/sys/fs/cgroup/app.slice/job.scope/memory.high", "209715200\n");
  const CgroupSources sources{"0::/app.slice/job.scope\n", kV2Mount, root.prefix()};
  EXPECT_EQ(cgroup_memory_limit(sources), 200 * kMiB) << "the scope's memory.high";
  root.write("/sys/fs/cgroup/app.slice/job.scope/memory.high", "max\n");
  EXPECT_EQ(cgroup_memory_limit(sources), 512 * kMiB) << "the parent's memory.max";
}

TEST(CgroupMemory, V1ReadsTheMemoryControllersHierarchy) {
  FakeRoot root;
  root.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  root.write("/sys/fs/cgroup/memory/batch/memory.limit_in_bytes", "9223372036854771712\n");
  root.write("/sys/fs/cgroup/memory/batch/job7/memory.limit_in_bytes", "104857600\n");
  root.write("/sys/fs/cgroup/cpu,cpuacct/batch/job7/memory.limit_in_bytes", "1\n");  // not the memory hierarchy
  const CgroupSources sources{"5:cpu,cpuacct:/batch/job7\n4:memory:/batch/job7\n0::/\n", kV1Mounts, root.prefix()};
  EXPECT_EQ(cgroup_memory_limit(sources), 100 * kMiB);
}

TEST(CgroupMemory, NoLimitAnywhereIsNone) {
  FakeRoot root;
  root.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(cgroup_memory_limit({"4:memory:/\n", kV1Mounts, root.prefix()}), UINT64_MAX) << "v1 unlimited";
  EXPECT_EQ(cgroup_memory_limit({"0::/user.slice\n", kV2Mount, root.prefix()}), UINT64_MAX) << "no files at all";
  EXPECT_EQ(cgroup_memory_limit({"", "", root.prefix()}), UINT64_MAX) << "no cgroups";
  root.write("/sys/fs/cgroup/user.slice/memory.max", "lots\n");
  EXPECT_EQ(cgroup_memory_limit({"0::/user.slice\n", kV2Mount, root.prefix()}), UINT64_MAX) << "not a number";
}

// In a container the mount is the container's own cgroup: its root
// (mountinfo's fourth field) is the path /proc/self/cgroup starts with,
// or a path the container cannot see at all.
TEST(CgroupMemory, AMountOfPartOfTheHierarchyIsReadFromItsRoot) {
  FakeRoot root;
  root.write("/sys/fs/cgroup/memory.max", "268435456\n");
  const std::string mount = "30 23 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(cgroup_memory_limit({"0::/docker/abc\n", mount, root.prefix()}), 256 * kMiB);
  EXPECT_EQ(cgroup_memory_limit({"0::/../elsewhere\n", mount, root.prefix()}), 256 * kMiB);
  root.write("/sys/fs/cgroup/worker/memory.max", "134217728\n");
  EXPECT_EQ(cgroup_memory_limit({"0::/docker/abc/worker\n", mount, root.prefix()}), 128 * kMiB);
}

TEST(PackingBudget, NoLimitKeepsTheDefaults) {
  const auto budget = packing_within_memory(UINT64_MAX, 2);
  EXPECT_FALSE(budget.fitted);
  EXPECT_EQ(budget.run_bytes, 8 * kMiB);
  EXPECT_EQ(budget.backlog_limit, 256 * kMiB);
  EXPECT_EQ(budget.threads, 0u);
  EXPECT_FALSE(packing_within_memory(uint64_t{64} << 30, 64).fitted) << "64 GiB is room enough";
}

TEST(PackingBudget, ATightLimitShrinksRunsBacklogAndThreads) {
  const auto small = packing_within_memory(100 * kMiB, 2);
  EXPECT_TRUE(small.fitted);
  EXPECT_EQ(small.run_bytes, 2 * kMiB) << "48 runs of 2 MiB fit in 100 MiB, of 4 MiB not";
  EXPECT_EQ(small.backlog_limit, 100 * kMiB / 6);
  EXPECT_EQ(small.threads, 1u);
  const auto gig = packing_within_memory(1024 * kMiB, 2);
  EXPECT_EQ(gig.run_bytes, 8 * kMiB);
  EXPECT_EQ(gig.backlog_limit, 1024 * kMiB / 6);
  EXPECT_FALSE(packing_within_memory(2048 * kMiB, 2).fitted) << "1/6 of 2 GiB is over the default backlog";
  EXPECT_EQ(gig.threads, 0u) << "two threads' scratch fits in 256 MiB";
  EXPECT_EQ(packing_within_memory(1024 * kMiB, 8).threads, 4u) << "eight would not";
  EXPECT_EQ(packing_within_memory(256 * kMiB, 2).threads, 0u) << "4 MiB runs: two threads in 64 MiB";
  EXPECT_EQ(packing_within_memory(16 * kMiB, 2).run_bytes, 1 * kMiB) << "never below 1 MiB";
}

}  // namespace
