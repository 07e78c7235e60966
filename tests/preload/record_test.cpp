// spoor record end to end: the real tool, the real shim, programs whose
// allocator calls are known, read back with the reader.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;

struct Process {
  int status = -1;  // shell-style exit status
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command line, capturing stdout and stderr.
Process run(const std::string& command) {
  const std::string err_file = std::filesystem::temp_directory_path() / ("spoor-rec-err-" + std::to_string(getpid()));
  Process r;
  FILE* p = popen((command + " 2>" + err_file).c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  FILE* e = fopen(err_file.c_str(), "r");
  while (e && (n = fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
  if (e) fclose(e);
  return r;
}

std::string trace_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("spoor-rec-" + std::to_string(getpid()) + "-" + name + ".spoor")).string();
}

struct HeapCounts {
  std::map<std::string, uint64_t> calls;  // by event name
  uint64_t alloc_bytes = 0;
  uint64_t events = 0;
};

HeapCounts count_heap(const std::string& path) {
  HeapCounts c;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return c;
  EXPECT_FALSE(trace->damage());
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    ++c.events;
    c.calls[e.descriptor->name]++;
    if (e.descriptor->name == "Alloc") c.alloc_bytes += std::get<uint64_t>(*e.field("size"));
  }
  return c;
}

const std::string kSpoor = SPOOR_TOOL;

TEST(Record, CountsEveryAllocatorCallOfAKnownProgram) {
  const std::string path = trace_path("counts");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 1000");
  EXPECT_EQ(r.status, 7) << "the program's exit status passes through: " << r.err;
  HeapCounts c = count_heap(path);
  uint64_t expected_bytes = sizeof(void*) * 1000 + 10 * 8;  // the array, the calloc
  for (int i = 0; i < 1000; ++i) expected_bytes += 16 + i % 100;
  EXPECT_EQ(c.calls["Alloc"], 1000u + 2);  // the blocks, the array, the calloc
  EXPECT_EQ(c.calls["Free"], 1000u + 2);   // the blocks, the array, the grown calloc
  EXPECT_EQ(c.calls["Realloc"], 1u);
  EXPECT_EQ(c.alloc_bytes, expected_bytes);
  EXPECT_NE(r.err.find("0 lost"), std::string::npos) << r.err;
}

TEST(Record, AlignedAndArrayAllocatorsAreRecorded) {
  const std::string path = trace_path("aligned");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_ALIGNED);
  EXPECT_EQ(r.status, 0) << r.err;
  HeapCounts c = count_heap(path);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // posix_memalign, aligned_alloc, memalign, valloc, pvalloc; reallocarray
  // from NULL is one Realloc event.
  EXPECT_EQ(c.calls["Alloc"], 5u);
  EXPECT_EQ(c.alloc_bytes, 100u + 256 + 50 + 10 + page);
  EXPECT_EQ(c.calls["Realloc"], 1u);
  EXPECT_EQ(c.calls["Free"], 6u);
}

TEST(Record, AllocationsCarryTheirCallersStackWrittenOnce) {
  const std::string path = trace_path("stacks");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_STACKS);
  ASSERT_EQ(r.status, 0) << r.err;
  unsigned long long leaf = 0, middle = 0, main_fn = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "leaf=%llx middle=%llx main=%llx", &leaf, &middle, &main_fn), 3) << r.out;

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  std::map<uint64_t, std::vector<uint64_t>> stacks;  // id -> frames
  std::map<uint64_t, int> times_written;
  std::vector<uint64_t> chain_ids;                   // stacks of the 10 known allocations
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.descriptor->name == "Stack") {
      const uint64_t id = std::get<uint64_t>(*e.field("id"));
      const auto blob = std::get<reader::Blob>(*e.field("frames")).bytes;
      std::vector<uint64_t> frames(blob.size() / 8);
      std::memcpy(frames.data(), blob.data(), frames.size() * 8);
      stacks[id] = frames;
      times_written[id]++;
    } else if (e.descriptor->name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size >= 1000 && size < 1010) chain_ids.push_back(std::get<uint64_t>(*e.field("stack")));
    }
  }
  ASSERT_EQ(chain_ids.size(), 10u);
  for (uint64_t id : chain_ids) EXPECT_EQ(id, chain_ids[0]) << "one call site, one stack ID";
  EXPECT_EQ(times_written[chain_ids[0]], 1) << "a stack is written once";
  const std::vector<uint64_t>& frames = stacks[chain_ids[0]];
  ASSERT_GE(frames.size(), 3u);
  // Return addresses lie inside the calling functions (small -O0 bodies).
  auto inside = [](uint64_t ip, uint64_t fn, uint64_t span) { return ip > fn && ip < fn + span; };
  EXPECT_TRUE(inside(frames[0], leaf, 256)) << std::hex << frames[0] << " vs leaf " << leaf;
  EXPECT_TRUE(inside(frames[1], middle, 256)) << std::hex << frames[1] << " vs middle " << middle;
  EXPECT_TRUE(inside(frames[2], main_fn, 512)) << std::hex << frames[2] << " vs main " << main_fn;
}

// Module events: what the symbolizer needs to resolve stack addresses.
struct ModuleEvents {
  std::map<std::string, std::string> build_id_by_path;  // ModuleLoad
  std::vector<std::string> unloaded;                     // ModuleUnload paths
};

ModuleEvents read_modules(const std::string& path) {
  ModuleEvents m;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return m;
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.descriptor->name == "ModuleLoad") {
      std::string id;
      char hex[3];
      for (uint8_t b : std::get<reader::Blob>(*e.field("build_id")).bytes) {
        std::snprintf(hex, sizeof hex, "%02x", b);
        id += hex;
      }
      m.build_id_by_path[std::string(std::get<std::string_view>(*e.field("path")))] = id;
    } else if (e.descriptor->name == "ModuleUnload") {
      m.unloaded.emplace_back(std::get<std::string_view>(*e.field("path")));
    }
  }
  return m;
}

TEST(Record, ModulesAreDescribedWithTheirBuildIds) {
  const std::string path = trace_path("modules");
  ASSERT_EQ(run(kSpoor + " record -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 10").status, 7);
  const ModuleEvents m = read_modules(path);
  const std::string exe = std::filesystem::canonical(SPOOR_HEAP_COUNTS).string();
  ASSERT_TRUE(m.build_id_by_path.count(exe)) << "the executable is a module";
  // The same build ID readelf reads from the file.
  const Process readelf = run("readelf -n " + exe + " | sed -n 's/.*Build ID: //p'");
  EXPECT_EQ(m.build_id_by_path.at(exe) + "\n", readelf.out);
  bool libc = false;
  for (const auto& [p, id] : m.build_id_by_path) libc |= p.find("libc.so") != std::string::npos;
  EXPECT_TRUE(libc);
}

TEST(Record, ModulesLoadedAndUnloadedAtRunTimeAreFollowed) {
  const std::string path = trace_path("dlopen");
  ASSERT_EQ(run(kSpoor + " record -o " + path + " -- " + SPOOR_DLOPEN + " " + SPOOR_DLOPEN_MODULE).status, 0);
  const ModuleEvents m = read_modules(path);
  std::string module;
  for (const auto& [p, id] : m.build_id_by_path)
    if (p.find("spoor_test_dlopen_module") != std::string::npos) module = p;
  ASSERT_FALSE(module.empty()) << "the dlopen'ed module is described";
  EXPECT_EQ(std::count(m.unloaded.begin(), m.unloaded.end(), module), 1) << "and its dlclose";
}

TEST(Record, OutputAndExitStatusAreUnchanged) {
  const Process plain = run(std::string(SPOOR_HEAP_COUNTS) + " 50 'hello, world'");
  const Process traced = run(kSpoor + " record -o " + trace_path("same") + " -- " + SPOOR_HEAP_COUNTS + " 50 'hello, world'");
  EXPECT_EQ(plain.out, "hello, world\n");
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.status, plain.status);
}

class RecordCrash : public ::testing::TestWithParam<std::pair<const char*, int>> {};

TEST_P(RecordCrash, EveryCommittedEventReachesTheFile) {
  const auto [how, signal] = GetParam();
  const std::string path = trace_path(std::string("crash-") + how);
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_CRASH + " 5000 " + how);
  EXPECT_EQ(r.status, 128 + signal) << r.err;
  EXPECT_NE(r.err.find("killed by signal " + std::to_string(signal)), std::string::npos) << r.err;
  HeapCounts c = count_heap(path);
  EXPECT_EQ(c.calls["Alloc"], 5000u);
  EXPECT_EQ(c.calls["Free"], 5000u);
}

INSTANTIATE_TEST_SUITE_P(Signals, RecordCrash,
                         ::testing::Values(std::make_pair("segv", 11), std::make_pair("kill", 9),
                                           std::make_pair("abort", 6)));

TEST(Record, AProgramThatExecsIsFollowedIntoItsNewImage) {
  // The shell execs the known program: same pid, new image, shim loaded again.
  const std::string path = trace_path("exec");
  const Process r = run(kSpoor + " record -o " + path + " -- sh -c 'exec " + SPOOR_HEAP_COUNTS + " 300'");
  EXPECT_EQ(r.status, 7) << r.err;
  HeapCounts c = count_heap(path);
  EXPECT_GE(c.calls["Alloc"], 300u + 2) << "the exec'ed image's allocations are recorded";
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace);
  EXPECT_TRUE(trace->warnings().empty()) << trace->warnings().front();
  ASSERT_EQ(trace->processes().size(), 1u);
  EXPECT_NE(trace->processes()[0].name.find("spoor_test_heap"), std::string::npos)
      << "the process is known by its image after the exec: " << trace->processes()[0].name;
}

TEST(Record, AMissingProgramIsAClearError) {
  const Process r = run(kSpoor + " record -o " + trace_path("missing") + " -- /nonexistent/program");
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("cannot run '/nonexistent/program'"), std::string::npos) << r.err;
}

TEST(Record, AStaticProgramRunsAndIsReportedUntraceable) {
  const Process r = run(kSpoor + " record -o " + trace_path("static") + " -- " + SPOOR_HEAP_COUNTS_STATIC + " 10 static");
  EXPECT_EQ(r.status, 7);
  EXPECT_EQ(r.out, "static\n");
  EXPECT_NE(r.err.find("never loaded libspoor-preload.so"), std::string::npos) << r.err;
}

TEST(Record, UsageErrors) {
  EXPECT_EQ(run(kSpoor + " record").status, 2);
  EXPECT_EQ(run(kSpoor + " record --bogus -- true").status, 2);
  const Process bad_spec = run(kSpoor + " record -p 'Spoor.Heap:0x1:loud' -- true");
  EXPECT_EQ(bad_spec.status, 127);
  EXPECT_NE(bad_spec.err.find("loud"), std::string::npos) << bad_spec.err;
}

}  // namespace
