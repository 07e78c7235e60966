// One spelling per module file: the merged /usr's /lib/... and /usr/lib/...
// name one library, known by its build ID or, lacking one, its realpath.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis_test_support.h"
#include "kernel_trace.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;
namespace fs = std::filesystem;

const Bytes kLibcId = {0x6c, 0x69, 0x62, 0x63, 0x01, 0x02, 0x03, 0x04};

const an::Image& image_of(const an::TraceModel& m, uint32_t pid) {
  const an::ProcessInfo* p = m.process(pid);
  EXPECT_NE(p, nullptr) << pid;
  return m.images[p->images.at(0)];
}

// Process 100 loaded the library as /lib/..., 200 as /usr/lib/... (files
// that are not on this machine: the build ID alone decides); the kernel's
// mmap record of 100's copy says /usr/lib/... too.
TEST(ModulePaths, TwoSpellingsWithOneBuildIdAreOneModule) {
  KernelTrace t;
  t.process(100, 1, "a", {"a"});
  t.process(200, 1, "b", {"b"});
  t.module_load(100, 10, 0x7f0000000000, 0x7f0000000000, 0x200000, "/nonexistent/lib/x86_64-linux-gnu/libc.so.6",
                kLibcId);
  t.module_load(200, 20, 0x7f1000000000, 0x7f1000000000, 0x200000,
                "/nonexistent/usr/lib/x86_64-linux-gnu/libc.so.6", kLibcId);
  t.mmap(100, 30, 0x7f0000000000, 0x200000, 0, 5, "/nonexistent/usr/lib/x86_64-linux-gnu/libc.so.6", kLibcId);
  t.tick(100, 100, 40);
  t.tick(200, 200, 40);
  Loaded l = load(t);
  const an::Image& a = image_of(l.model, 100);
  const an::Image& b = image_of(l.model, 200);
  ASSERT_EQ(a.modules.size(), 1u) << "the kernel's record of the same mapping adds no second module";
  ASSERT_EQ(b.modules.size(), 1u);
  EXPECT_EQ(a.modules[0].path, "/nonexistent/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(b.modules[0].path, a.modules[0].path) << "the first spelling seen names the file everywhere";
}

// Without build IDs, two spellings of one existing file (through a
// symlinked directory) are one; another file in it stays itself.
TEST(ModulePaths, WithoutABuildIdTheRealpathDecides) {
  const fs::path root = fs::temp_directory_path() / ("spoor-usrmerge-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "usr/lib");
  std::ofstream(root / "usr/lib/libbar.so") << "not really ELF";
  std::ofstream(root / "usr/lib/libbaz.so") << "not really ELF either";
  fs::create_directory_symlink("usr/lib", root / "lib");
  KernelTrace t;
  t.process(100, 1, "a", {"a"});
  t.process(200, 1, "b", {"b"});
  t.module_load(100, 10, 0x10000, 0x10000, 0x1000, (root / "lib/libbar.so").string());
  t.module_load(200, 20, 0x10000, 0x10000, 0x1000, (root / "usr/lib/libbar.so").string());
  t.module_load(200, 21, 0x20000, 0x20000, 0x1000, (root / "usr/lib/libbaz.so").string());
  t.tick(100, 100, 40);
  t.tick(200, 200, 40);
  Loaded l = load(t);
  const an::Image& a = image_of(l.model, 100);
  const an::Image& b = image_of(l.model, 200);
  ASSERT_EQ(b.modules.size(), 2u);
  EXPECT_EQ(b.modules[0].path, (root / "lib/libbar.so").string());
  EXPECT_EQ(b.modules[0].path, a.modules[0].path);
  EXPECT_EQ(b.modules[1].path, (root / "usr/lib/libbaz.so").string());
  fs::remove_all(root);
}

}  // namespace
