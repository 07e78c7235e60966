// Code in no module named by its JIT's perf map (perf-PID.map), through
// SymbolizedStacks.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "analysis_test_support.h"
#include "spoor/analysis/symbolized_stacks.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;
namespace fs = std::filesystem;

struct PerfMapDir {
  fs::path dir = fs::temp_directory_path() / ("spoor-perf-map-" + std::to_string(getpid()));
  PerfMapDir() { fs::create_directories(dir); }
  ~PerfMapDir() { fs::remove_all(dir); }
  void write(uint32_t pid, const std::string& text) const {
    std::ofstream(dir / ("perf-" + std::to_string(pid) + ".map")) << text;
  }
};

Loaded traced_pid_100() {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.module_load(100, 1, 0x400000, 0x400000, 0x10000, "/nonexistent/prog");
  return load(t);
}

spoor::symbolizer::Options reading(const PerfMapDir& maps) {
  spoor::symbolizer::Options o;
  o.perf_map_dir = maps.dir.string();
  return o;
}

std::string label_at(an::SymbolizedStacks& symbols, const Loaded& l, uint64_t address, bool return_address) {
  return symbols.frames_at(l.model.process(100)->images[0], address, return_address).at(0).label();
}

TEST(PerfMap, NamesCodeInNoModuleByTheLatestLineHoldingIt) {
  const PerfMapDir maps;
  // With and without 0x; the third line's code replaced part of the
  // first's; one line is not a map line.
  maps.write(100,
             "0x900000 0x100 LazyCompile:*fetch app.js:10\n"
             "901000 80 Interpreter\n"
             "900080 40 void Foo.bar(int)\n"
             "not a line of a map\n");
  const Loaded l = traced_pid_100();
  an::SymbolizedStacks symbols(l.model, reading(maps));
  EXPECT_EQ(label_at(symbols, l, 0x900010, false), "LazyCompile:*fetch app.js:10");
  EXPECT_EQ(label_at(symbols, l, 0x900090, false), "void Foo.bar(int)") << "the later line wins";
  EXPECT_EQ(label_at(symbols, l, 0x9000c0, false), "LazyCompile:*fetch app.js:10");
  EXPECT_EQ(label_at(symbols, l, 0x901010, false), "Interpreter");
  EXPECT_EQ(label_at(symbols, l, 0x900100, false), "0x900100") << "a line's code ends before START + SIZE";
  EXPECT_EQ(label_at(symbols, l, 0x900100, true), "LazyCompile:*fetch app.js:10")
      << "a return address is looked up at its call";
  EXPECT_EQ(label_at(symbols, l, 0x400010, false), "prog+0x10") << "a module's address is the module's";
  bool skipped = false;
  for (const auto& p : symbols.problems())
    skipped = skipped || (p.path.ends_with("perf-100.map") && p.message.find("skipped 1 line") != std::string::npos);
  EXPECT_TRUE(skipped);
}

TEST(PerfMap, AMapWrittenOutsideTheRecordingIsNotRead) {
  // The pid's map was written a day after the recording: another process
  // that had the pid later.
  const PerfMapDir maps;
  maps.write(100, "900000 100 someone_else\n");
  Loaded l = traced_pid_100();
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  l.model.has_realtime = true;
  l.model.realtime_minus_monotonic_ns = now - int64_t{86400} * 1'000'000'000 - l.model.last_ns;
  an::SymbolizedStacks symbols(l.model, reading(maps));
  EXPECT_EQ(label_at(symbols, l, 0x900010, false), "0x900010");
  bool said = false;
  for (const auto& p : symbols.problems())
    said = said || p.message.find("written after this recording") != std::string::npos;
  EXPECT_TRUE(said);

  // The same map, written during the recording, is read.
  l.model.realtime_minus_monotonic_ns = now - l.model.last_ns;
  an::SymbolizedStacks during(l.model, reading(maps));
  EXPECT_EQ(label_at(during, l, 0x900010, false), "someone_else");
}

TEST(PerfMap, OnlyARegularFileOfTheUserOrRootIsRead) {
  // /tmp is anyone's: a FIFO there would hang the read.
  const PerfMapDir maps;
  ASSERT_EQ(mkfifo((maps.dir / "perf-100.map").c_str(), 0600), 0);
  const Loaded l = traced_pid_100();
  an::SymbolizedStacks symbols(l.model, reading(maps));
  EXPECT_EQ(label_at(symbols, l, 0x900010, false), "0x900010");
  bool said = false;
  for (const auto& p : symbols.problems()) said = said || p.message == "not read: not a regular file";
  EXPECT_TRUE(said);
  if (getuid() == 0) {
    fs::remove(maps.dir / "perf-100.map");
    maps.write(100, "900000 100 planted\n");
    ASSERT_EQ(chown((maps.dir / "perf-100.map").c_str(), 4242, 4242), 0);
    an::SymbolizedStacks other(l.model, reading(maps));
    EXPECT_EQ(label_at(other, l, 0x900010, false), "0x900010");
  }
}

TEST(PerfMap, WithoutAMapOrWithReadingOffCodeInNoModuleKeepsItsAddress) {
  const PerfMapDir maps;
  const Loaded l = traced_pid_100();
  an::SymbolizedStacks none(l.model, reading(maps));
  EXPECT_EQ(label_at(none, l, 0x900010, false), "0x900010");
  maps.write(100, "900000 100 named\n");
  spoor::symbolizer::Options off;
  off.perf_map_dir = "";
  an::SymbolizedStacks reading_off(l.model, off);
  EXPECT_EQ(label_at(reading_off, l, 0x900010, false), "0x900010");
}

}  // namespace
