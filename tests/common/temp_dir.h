// A test process's own directory for the files it makes, under the
// temporary directory, removed with everything in it when the process
// ends (by the process that made it: a fork child's exit leaves it).
// Tests that fail half-way leave nothing behind either.
#ifndef SPOOR_TESTS_COMMON_TEMP_DIR_H
#define SPOOR_TESTS_COMMON_TEMP_DIR_H

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace spoor::test {

class TestTempDir {
 public:
  explicit TestTempDir(const std::string& prefix)
      : owner_(getpid()),
        path_(std::filesystem::temp_directory_path() / (prefix + std::to_string(owner_))) {}
  ~TestTempDir() {
    std::error_code ignored;
    if (getpid() == owner_) std::filesystem::remove_all(path_, ignored);
  }
  TestTempDir(const TestTempDir&) = delete;
  TestTempDir& operator=(const TestTempDir&) = delete;

  // `name` in the directory, which exists once this returns.
  std::string path_of(const std::string& name) const {
    std::error_code ignored;
    std::filesystem::create_directories(path_, ignored);
    return (path_ / name).string();
  }

 private:
  pid_t owner_;
  std::filesystem::path path_;
};

// A path in this test process's directory (spoor-test-PID/NAME).
inline std::string test_temp_path(const std::string& name) {
  static TestTempDir dir("spoor-test-");
  return dir.path_of(name);
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_COMMON_TEMP_DIR_H
