// A cgroup of a test's own, with one limit set, for tests of how Spoor
// behaves under a container's limits (memory, process count). Made under
// the controller's v1 hierarchy or under cgroup v2, which takes root;
// dir() is empty when neither can be made here, and the test skips.
// Removed once its processes are gone (by the process that made it).
#ifndef SPOOR_TESTS_COMMON_TEST_CGROUP_H
#define SPOOR_TESTS_COMMON_TEST_CGROUP_H

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace spoor::test {

class TestCgroup {
 public:
  // `controller` names the v1 hierarchy ("memory", "pids"); `v1_file` and
  // `v2_file` the limit's file in each ("memory.limit_in_bytes" and
  // "memory.max"; "pids.max" in both).
  TestCgroup(const std::string& controller, const std::string& v1_file, const std::string& v2_file, uint64_t limit)
      : owner_(getpid()) {
    const std::string name = "/spoor-test-" + controller + "-" + std::to_string(owner_);
    const std::pair<std::string, std::string> kinds[] = {{"/sys/fs/cgroup/" + controller, v1_file},
                                                         {"/sys/fs/cgroup", v2_file},
                                                         {"/sys/fs/cgroup/unified", v2_file}};
    for (const auto& [base, file] : kinds) {
      const std::string dir = base + name;
      if (mkdir(dir.c_str(), 0755) != 0) continue;
      // A cgroup's directory comes with its files; a plain directory (the
      // tmpfs v1 mounts its hierarchies on) does not.
      if (std::filesystem::exists(dir + "/cgroup.procs") && std::filesystem::exists(dir + "/" + file)) {
        std::ofstream out(dir + "/" + file);
        out << limit << std::flush;
        if (out.good()) {
          dir_ = dir;
          limit_file_ = dir + "/" + file;
          return;
        }
      }
      rmdir(dir.c_str());
    }
  }
  ~TestCgroup() {
    if (getpid() != owner_) return;
    for (int i = 0; i < 100 && !dir_.empty() && rmdir(dir_.c_str()) != 0; ++i) usleep(20000);
  }
  TestCgroup(const TestCgroup&) = delete;
  TestCgroup& operator=(const TestCgroup&) = delete;

  const std::string& dir() const { return dir_; }
  // A shell command's prefix that moves its shell into the cgroup.
  std::string enter() const { return "echo $$ > " + dir_ + "/cgroup.procs && "; }
  // Moves the calling process in (a fork child, so the test's own process
  // stays out); false when it could not.
  bool join() const {
    std::ofstream out(dir_ + "/cgroup.procs");
    out << getpid() << std::flush;
    return out.good();
  }
  bool set(uint64_t limit) const {
    std::ofstream out(limit_file_);
    out << limit << std::flush;
    return out.good();
  }

 private:
  pid_t owner_;
  std::string dir_;
  std::string limit_file_;
};

}  // namespace spoor::test

#endif  // SPOOR_TESTS_COMMON_TEST_CGROUP_H
