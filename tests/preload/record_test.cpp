// spoor record end to end: the real tool, the real shim, programs whose
// allocator calls are known, read back with the reader. Here: what is
// recorded (heap calls, stacks, modules, compression), the process tree
// followed, and programs with allocators, handlers and runtimes of their
// own. Beside it: record_output_test.cpp (where the trace goes, write
// failures, full rings), record_signals_test.cpp (how processes end and
// signals), record_untraceable_test.cpp (what the shim cannot reach, usage
// errors), record_descriptors_test.cpp (descriptors and namespaces).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "report_json.h"
#include "record_test_support.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;

using spoor::test::Process;
using spoor::test::run;
using namespace spoor::test::record;  // trace_path, stack_frames, count_heap, kSpoor, traced_processes

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

TEST(Record, AProviderNamedShortRecordsItsEventsWithReadableStacks) {
  // -p heap, as the help text names the provider: the program's
  // allocations, each with a stack the trace holds, and the module map
  // the symbolizer needs; no I/O or samples.
  const std::string path = trace_path("short-name");
  const Process r = run(kSpoor + " record -p heap -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 1000");
  EXPECT_EQ(r.status, 7) << r.err;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  std::set<uint64_t> written, used;
  std::map<std::string, uint64_t> calls;
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    calls[e.descriptor->name]++;
    if (e.descriptor->name == "Stack") written.insert(std::get<uint64_t>(*e.field("id")));
    if (e.descriptor->name == "Alloc") used.insert(std::get<uint64_t>(*e.field("stack")));
  }
  EXPECT_EQ(calls["Alloc"], 1000u + 2);
  EXPECT_GT(calls["ModuleLoad"], 0u);
  EXPECT_EQ(calls["Sample"] + calls["Write"] + calls["ThreadStart"], 0u) << "only what -p named";
  for (uint64_t id : used) EXPECT_TRUE(written.count(id)) << "stack " << id << " is not in the trace";
}

// The traced processes round their events' times to the grain the trace's
// CLOCK block names (--time-resolution, 20 ns by default: a power of two
// of ticks); --time-resolution 0 keeps every tick, and says so.
TEST(Record, EventTimesAreRoundedToTheResolutionTheTraceNames) {
  for (const char* resolution : {"", "--time-resolution 100 ", "--time-resolution 0 "}) {
    SCOPED_TRACE(resolution);
    const std::string path = trace_path("resolution");
    const Process r = run(kSpoor + " record " + resolution + "-o " + path + " -- " + SPOOR_HEAP_COUNTS + " 1000");
    ASSERT_EQ(r.status, 7) << r.err;
    auto trace = reader::Trace::open(path);
    ASSERT_TRUE(trace) << trace.error();
    const reader::Clock& clock = trace.value().clock();
    const double tick_ns = 1e12 / static_cast<double>(clock.freq_millihz);
    const uint32_t grain = clock.time_grain_ticks;
    EXPECT_EQ(grain & (grain - 1), 0u) << grain << " is not a power of two";
    const double wanted = std::string(resolution).empty() ? 20 : std::atof(resolution + 18);
    if (wanted == 0) {
      EXPECT_EQ(grain, 1u);
    } else {
      EXPECT_LE(grain * tick_ns, wanted * 1.01) << grain;
      if (tick_ns <= wanted / 4) {
        EXPECT_GT(grain * 2 * tick_ns, wanted * 0.99) << "the largest such power of two";
      }
    }
    uint64_t program_events = 0;
    reader::EventReader events(trace.value());
    reader::Event e;
    while (events.next(e)) {
      // Only the traced program writes heap events (the recorder's own
      // stream, which keeps every tick, has none).
      if (e.provider->name == "Spoor.Heap") {
        ++program_events;
        EXPECT_EQ(e.ticks % grain, 0u) << e.descriptor->name << " at tick " << e.ticks;
      }
    }
    EXPECT_GE(program_events, 2000u);
    const Process info = run(kSpoor + " info " + path);
    if (grain > 1) {
      EXPECT_NE(info.out.find("resolution events' times rounded down to " + std::to_string(grain) + " ticks"),
                std::string::npos)
          << info.out;
    } else {
      EXPECT_EQ(info.out.find("resolution events"), std::string::npos) << "every tick, as in any trace\n" << info.out;
    }
    std::filesystem::remove(path);
  }
}

TEST(Record, ARecordingInsideARecordingKeepsItsProgram) {
  // spoor record traced by spoor record (a test suite or CI job run under
  // it): the inner recorder's program is the inner's to record; the outer
  // shim's exec hook must not send it to the outer recorder.
  const std::string outer = trace_path("outer"), inner = trace_path("inner");
  const Process r = run(kSpoor + " record -o " + outer + " -- " + kSpoor + " record -o " + inner + " -- " +
                        SPOOR_HEAP_COUNTS + " 1000");
  EXPECT_EQ(r.status, 7) << r.err;
  HeapCounts in = count_heap(inner);
  EXPECT_EQ(in.calls["Alloc"], 1000u + 2) << r.err;
  EXPECT_NE(r.err.find("1 process, "), std::string::npos) << "the inner recorder saw its program\n" << r.err;
  HeapCounts out = count_heap(outer);  // the two spoor processes, whole
  EXPECT_GT(out.events, 0u);
  // The outer recording says where the program went.
  EXPECT_NE(r.err.find(std::string("not traced, but it ran: ") + SPOOR_HEAP_COUNTS + " (in another spoor recording)"),
            std::string::npos)
      << r.err;
  const Process report = run(kSpoor + " report --threads " + outer);
  EXPECT_NE(report.out.find("exec not traced: " + std::string(SPOOR_HEAP_COUNTS) + ": in another spoor recording"),
            std::string::npos)
      << report.out;
}

TEST(Record, CompressedAndUncompressedRecordingsHoldTheSameEvents) {
  const std::string zstd = trace_path("zstd"), none = trace_path("none");
  // No CPU samples: their number varies from run to run.
  const Process z = run(kSpoor + " record --sample-hz 0 --compress=zstd -o " + zstd + " -- " + SPOOR_HEAP_COUNTS + " 3000");
  const Process n = run(kSpoor + " record --sample-hz 0 --compress none -o " + none + " -- " + SPOOR_HEAP_COUNTS + " 3000");
  ASSERT_EQ(z.status, 7) << z.err;
  ASSERT_EQ(n.status, 7) << n.err;
  EXPECT_NE(z.err.find("zstd packed"), std::string::npos) << z.err;
  EXPECT_EQ(n.err.find("zstd packed"), std::string::npos) << n.err;
  const HeapCounts zc = count_heap(zstd), nc = count_heap(none);
  EXPECT_EQ(zc.calls, nc.calls);
  EXPECT_EQ(zc.alloc_bytes, nc.alloc_bytes);
  EXPECT_EQ(zc.calls.at("Alloc"), 3000u + 2);

  auto zt = reader::Trace::open(zstd);
  auto nt = reader::Trace::open(none);
  ASSERT_TRUE(zt && nt);
  EXPECT_GT(zt->compression().blocks, 0u);
  EXPECT_EQ(nt->compression().blocks, 0u);
  EXPECT_LT(zt->file_size() * 3, nt->file_size());

  const Process info = run(kSpoor + " info " + zstd);
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("compressed " + std::to_string(zt->compression().blocks) + " COMPRESSED blocks: " +
                          std::to_string(zt->compression().stored_bytes) + " bytes hold " +
                          std::to_string(zt->compression().raw_bytes) + " bytes of blocks ("),
            std::string::npos)
      << info.out;
  EXPECT_EQ(run(kSpoor + " info " + none).out.find("COMPRESSED"), std::string::npos);
}

TEST(Record, ACutCompressedTraceSaysWhereItWasCut) {
  const std::string path = trace_path("cut");
  ASSERT_EQ(run(kSpoor + " record -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 5000").status, 7);
  // Cut 20 bytes into the last block (the header says how long each is).
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  uint64_t last = 32;
  for (uint64_t at = 32; at + 16 <= bytes.size();) {
    uint32_t payload = 0;
    std::memcpy(&payload, bytes.data() + at + 8, 4);
    last = at;
    at += 16 + payload;
  }
  const uint64_t cut = last + 20;
  std::filesystem::resize_file(path, cut);
  const Process info = run(kSpoor + " info " + path);
  EXPECT_EQ(info.status, 1);
  EXPECT_NE(info.err.find("truncated at byte " + std::to_string(cut) + " inside a COMPRESSED block"),
            std::string::npos)
      << info.err;
}

TEST(Record, CompressTakesZstdOrNone) {
  const Process r = run(kSpoor + " record --compress=lz4 -- " + SPOOR_HEAP_COUNTS + " 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--compress takes zstd or none, not 'lz4'"), std::string::npos) << r.err;
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
      stacks[id] = stack_frames(e);
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

TEST(Record, EveryOperatorNewAndDeleteAndMappingIsRecordedOnce) {
  const std::string path = trace_path("cpp-new");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_CPP_NEW);
  ASSERT_EQ(r.status, 0) << r.err;
  unsigned long long main_fn = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "main=%llx", &main_fn), 1) << r.out;
  EXPECT_NE(r.out.find("\nbad_alloc caught\n"), std::string::npos) << r.out;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  std::map<uint64_t, uint64_t> allocs_by_size, frees_of_size;
  std::map<uint64_t, uint64_t> size_of;  // live pointer -> size
  std::vector<std::string> maps;
  std::map<uint64_t, uint64_t> first_frame;  // stack id -> innermost return address
  uint64_t stack_of_100 = 0;
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    const std::string& name = e.descriptor->name;
    if (name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      allocs_by_size[size]++;
      if (size == 100) stack_of_100 = std::get<uint64_t>(*e.field("stack"));
      size_of[std::get<reader::Pointer>(*e.field("ptr")).address] = size;
    } else if (name == "Free") {
      auto it = size_of.find(std::get<reader::Pointer>(*e.field("ptr")).address);
      if (it != size_of.end()) {
        frees_of_size[it->second]++;
        size_of.erase(it);
      }
    } else if (name == "Stack") {
      const auto blob = std::get<reader::Blob>(*e.field("frames")).bytes;
      uint64_t frame0 = 0;
      if (blob.size() >= 8) std::memcpy(&frame0, blob.data(), 8);
      first_frame[std::get<uint64_t>(*e.field("id"))] = frame0;
    } else if (name == "Mmap" || name == "Mremap" || name == "Munmap") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size >= (1u << 20)) maps.push_back(name + " " + std::to_string(size >> 20));
    }
  }
  // Once each: operator new calls malloc, which must not count again.
  const std::map<uint64_t, uint64_t> expected{{4, 10}, {100, 10}, {7, 5}, {64, 5}, {33, 3}};
  for (const auto& [size, count] : expected) {
    EXPECT_EQ(allocs_by_size[size], count) << "allocations of " << size << " bytes";
    EXPECT_EQ(frees_of_size[size], count) << "frees of " << size << "-byte blocks";
  }
  EXPECT_EQ(maps, (std::vector<std::string>{"Mmap 1", "Mremap 2", "Munmap 2"}));
  const uint64_t caller = first_frame[stack_of_100];
  EXPECT_TRUE(caller > main_fn && caller - main_fn < 4096)
      << "new char[100] was recorded by the operator new hook, called from main: frame 0 is 0x" << std::hex
      << caller << ", main is 0x" << main_fn;
}

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
  const std::vector<const reader::Process*> traced = traced_processes(*trace);
  ASSERT_EQ(traced.size(), 1u) << "one process, two images";
  EXPECT_NE(traced[0]->name.find("spoor_test_heap"), std::string::npos)
      << "the process is known by its image after the exec: " << traced[0]->name;
  // Two images: ProcessStart with exec_count 0, then 1 after the exec;
  // and the shim's start in each, after its ProcessStart.
  std::vector<uint64_t> exec_counts;
  std::vector<std::string> order;
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.descriptor->name == "ProcessStart") exec_counts.push_back(std::get<uint64_t>(*e.field("exec_count")));
    if (e.descriptor->name == "ProcessStart" || e.descriptor->name == "ShimStarted") {
      order.push_back(e.descriptor->name);
      if (e.descriptor->name == "ShimStarted") {
        EXPECT_GT(std::get<uint64_t>(*e.field("duration_ns")), 0u);
      }
    }
  }
  EXPECT_EQ(exec_counts, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(order, (std::vector<std::string>{"ProcessStart", "ShimStarted", "ProcessStart", "ShimStarted"}));
}

struct ChildFacts {
  uint32_t ppid = 0;
  uint64_t role_allocs = 0;  // Alloc events of the process's own marker size
  std::string name;
};

TEST(Record, EveryProcessOfTheTreeIsTracedInItsOwnStreams) {
  // fork, posix_spawn, and vfork + execve with an environment that lacks
  // LD_PRELOAD: each child is traced, with its own allocations.
  const std::string path = trace_path("children");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_CHILDREN);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "children exited with 12 in all\n") << "the program behaves the same traced";
  EXPECT_NE(r.err.find("4 processes"), std::string::npos) << r.err;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage());
  std::map<uint32_t, ChildFacts> by_pid;
  for (const reader::Process* p : traced_processes(*trace)) by_pid[p->pid] = {p->ppid, 0, p->name};
  ASSERT_EQ(by_pid.size(), 4u);
  std::map<uint32_t, std::map<uint64_t, uint64_t>> sizes;  // pid -> marker size -> allocs
  std::map<uint32_t, int> exit_codes;                      // reaped pid -> code
  std::map<uint32_t, int> main_thread_starts;              // pid -> ThreadStart of tid == pid
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.descriptor->name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size >= 1000 && size <= 1003) sizes[e.pid][size]++;
    } else if (e.descriptor->name == "ProcessExit") {
      exit_codes[static_cast<uint32_t>(std::get<uint64_t>(*e.field("pid")))] =
          static_cast<int>(std::get<int64_t>(*e.field("exit_code")));
    } else if (e.descriptor->name == "ThreadStart" && std::get<uint64_t>(*e.field("tid")) == e.pid) {
      main_thread_starts[e.pid]++;
    }
  }
  for (const auto& [pid, facts] : by_pid)
    EXPECT_EQ(main_thread_starts[pid], 1) << "pid " << pid << " describes its main thread once, in its own streams";
  // Each process made exactly its own allocations, in its own streams.
  std::map<uint64_t, uint32_t> pid_of_role;
  for (auto& [pid, counts] : sizes) {
    ASSERT_EQ(counts.size(), 1u) << "pid " << pid << " has allocations of another process";
    pid_of_role[counts.begin()->first - 1000] = pid;
    const uint64_t expected[] = {100, 200, 300, 400};
    EXPECT_EQ(counts.begin()->second, expected[counts.begin()->first - 1000]) << "pid " << pid;
  }
  ASSERT_EQ(pid_of_role.size(), 4u) << "the parent, fork, posix_spawn and vfork+exec children";
  const uint32_t parent = pid_of_role[0];
  for (uint64_t role = 1; role <= 3; ++role) {
    EXPECT_EQ(by_pid[pid_of_role[role]].ppid, parent) << "role " << role;
    EXPECT_EQ(exit_codes[pid_of_role[role]], static_cast<int>(role) + 2) << "role " << role;
  }
  EXPECT_EQ(exit_codes[parent], 0) << "the program's own end, recorded by spoor record";

  // spoor info counts each provider once over all processes (each process
  // describes its events under keys of its own).
  const Process info = run(kSpoor + " info " + path);
  ASSERT_EQ(info.status, 0) << info.err;
  for (const std::string provider : {"  Spoor.Heap {", "  Spoor.Process {"}) {
    const size_t first = info.out.find(provider);
    ASSERT_NE(first, std::string::npos) << info.out;
    EXPECT_EQ(info.out.find(provider, first + 1), std::string::npos) << provider << " twice:\n" << info.out;
  }
}

// A process made by clone() itself (no CLONE_VM) gets no fork handlers
// from glibc: its shim went on writing into the parent's rings, as the
// parent. The clone hook has the child leave them and join as a fork
// child does: each process's allocations are its own. The same for a
// child made by syscall(SYS_clone) or syscall(SYS_clone3) without a
// stack, whose shim recorded nothing at all before the syscall() stand-in
// (it saw another pid).
class CloneChild : public ::testing::TestWithParam<const char*> {};

TEST_P(CloneChild, IsAProcessOfItsOwn) {
  const std::string path = trace_path(std::string("raw-clone-") + GetParam());
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_RAW_CLONE + " " + GetParam());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "child exited with 5\n");
  EXPECT_NE(r.err.find("2 processes,"), std::string::npos) << r.err;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  std::map<uint32_t, std::map<uint64_t, uint64_t>> sizes;  // pid -> marker size -> allocs
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e))
    if (e.descriptor->name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size == 1300 || size == 1301) sizes[e.pid][size]++;
    }
  ASSERT_EQ(sizes.size(), 2u) << "the parent's blocks and the child's, under two pids";
  for (const auto& [pid, counts] : sizes) {
    ASSERT_EQ(counts.size(), 1u) << "pid " << pid << " has the other process's blocks";
    EXPECT_EQ(counts.begin()->second, counts.begin()->first == 1300 ? 100u : 300u) << "pid " << pid;
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(MadeBy, CloneChild, ::testing::Values("clone", "syscall", "clone3"));

TEST(Record, AForkChildWritesTheStacksItSharesWithItsParentInItsOwnStreams) {
  // A stack the parent wrote before the fork is in the parent's streams:
  // the child must write it in its own before its first event that uses
  // it, with the same frames (stack IDs are per process).
  const std::string path = trace_path("fork-stacks");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_FORK_STACKS);
  ASSERT_EQ(r.status, 0) << r.err;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage());
  std::map<uint32_t, std::map<uint64_t, std::vector<uint64_t>>> stacks;  // pid -> id -> frames
  std::map<uint64_t, std::vector<uint64_t>> frames_of_size;             // 2000..2002 -> frames
  std::map<uint64_t, uint32_t> pid_of_size;
  // pid -> "path bias build-id" of each ModuleLoad; pid -> ModuleImage bytes
  std::map<uint32_t, std::set<std::string>> modules;
  std::map<uint32_t, uint64_t> image_bytes;
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.descriptor->name == "ModuleLoad") {
      std::string line = std::string(std::get<std::string_view>(*e.field("path"))) + " " +
                         std::to_string(std::get<reader::Pointer>(*e.field("bias")).address) + " ";
      for (uint8_t b : std::get<reader::Blob>(*e.field("build_id")).bytes) line += std::to_string(b) + ".";
      modules[e.pid].insert(line);
    } else if (e.descriptor->name == "ModuleImage") {
      image_bytes[e.pid] += std::get<reader::Blob>(*e.field("image")).bytes.size();
    } else if (e.descriptor->name == "Stack") {
      stacks[e.pid][std::get<uint64_t>(*e.field("id"))] = stack_frames(e);
    } else if (e.descriptor->name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size < 2000 || size > 2002) continue;
      const uint64_t id = std::get<uint64_t>(*e.field("stack"));
      ASSERT_NE(id, 0u) << "size " << size;
      ASSERT_TRUE(stacks[e.pid].count(id)) << "size " << size << ": stack " << id
                                           << " not written in pid " << e.pid << "'s streams before its use";
      frames_of_size[size] = stacks[e.pid][id];
      pid_of_size[size] = e.pid;
    }
  }
  ASSERT_EQ(frames_of_size.size(), 3u);
  EXPECT_EQ(pid_of_size[2000], pid_of_size[2001]);
  EXPECT_NE(pid_of_size[2002], pid_of_size[2000]) << "the child's allocation in the child's streams";
  ASSERT_GE(frames_of_size[2000].size(), 3u);
  EXPECT_EQ(frames_of_size[2001], frames_of_size[2000]) << "one call site, one stack";
  EXPECT_EQ(frames_of_size[2002], frames_of_size[2000]) << "the child's stack is the parent's";
  // The child describes in its own streams every module the parent did
  // (from what the parent's scan kept: same path, bias and build ID), and
  // the vDSO's bytes.
  const uint32_t parent = pid_of_size[2000], child = pid_of_size[2002];
  ASSERT_GE(modules[parent].size(), 4u);
  EXPECT_EQ(modules[child], modules[parent]);
  EXPECT_GT(image_bytes[parent], 0u);
  EXPECT_EQ(image_bytes[child], image_bytes[parent]);
}

TEST(Record, ManyMoreStacksThanTheTablesFirstLevelEachKeepOneIdAndTheirFrames) {
  // 2^14 distinct stacks: the stack table grows past its first levels
  // while they are written, and the stacks of the first levels are found
  // there later. Each must keep the ID it got first, be written once, and
  // decode to the call path that made it. The parent takes every path
  // three times; its fork child, starting from an empty table, twice.
  const std::string path = trace_path("many-stacks");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_MANY_STACKS);
  ASSERT_EQ(r.status, 0) << r.err;
  unsigned long long zero_fn = 0, one_fn = 0, main_fn = 0;
  int bits = 0, base = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "zero=%llx one=%llx main=%llx bits=%d base=%d", &zero_fn, &one_fn, &main_fn,
                        &bits, &base),
            5)
      << r.out;
  const uint64_t paths = uint64_t{1} << bits;

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage());
  std::map<uint32_t, std::map<uint64_t, std::vector<uint64_t>>> stacks;  // pid -> id -> frames
  std::map<uint32_t, std::map<uint64_t, int>> times_written;            // pid -> id -> Stack events
  std::map<uint32_t, std::map<uint64_t, std::vector<uint64_t>>> ids;    // pid -> path -> ID of each pass
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.descriptor->name == "Stack") {
      const uint64_t id = std::get<uint64_t>(*e.field("id"));
      stacks[e.pid][id] = stack_frames(e);
      times_written[e.pid][id]++;
    } else if (e.descriptor->name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size < static_cast<uint64_t>(base) || size >= base + paths) continue;
      const uint64_t id = std::get<uint64_t>(*e.field("stack"));
      ASSERT_NE(id, 0u) << "path " << size - base;
      ASSERT_TRUE(stacks[e.pid].count(id)) << "path " << size - base << ": stack " << id
                                           << " used before it was written";
      ids[e.pid][size - base].push_back(id);
    }
  }
  ASSERT_EQ(ids.size(), 2u) << "the parent and its fork child";
  std::map<size_t, int> processes_by_passes;
  for (const auto& [pid, by_path] : ids) {
    ASSERT_EQ(by_path.size(), paths) << "pid " << pid;
    const size_t passes = by_path.begin()->second.size();
    processes_by_passes[passes]++;
    std::map<uint64_t, uint64_t> path_of_id;
    for (const auto& [v, of_pass] : by_path) {
      ASSERT_EQ(of_pass.size(), passes) << "pid " << pid << " path " << v;
      const uint64_t id = of_pass[0];
      for (uint64_t later : of_pass) EXPECT_EQ(later, id) << "pid " << pid << " path " << v << ": a stack keeps its ID";
      const auto [it, first] = path_of_id.emplace(id, v);
      EXPECT_TRUE(first) << "pid " << pid << ": paths " << it->second << " and " << v << " share stack " << id;
      EXPECT_EQ(times_written[pid][id], 1) << "pid " << pid << " path " << v << ": a stack is written once";
      // frames[k] returns into the function at depth bits-1-k, one() for
      // a set bit: the nearest of the two below the address (small -O0
      // bodies), then every_path and main.
      const std::vector<uint64_t>& frames = stacks[pid][id];
      ASSERT_GT(frames.size(), static_cast<size_t>(bits)) << "pid " << pid << " path " << v;
      for (int k = 0; k < bits; ++k) {
        const uint64_t ip = frames[k];
        const uint64_t in = ip > one_fn && (ip < zero_fn || one_fn > zero_fn) ? one_fn : zero_fn;
        ASSERT_TRUE(ip > in && ip < in + 512) << std::hex << ip << " (frame " << std::dec << k << ", path " << v << ")";
        EXPECT_EQ(in == one_fn, ((v >> (bits - 1 - k)) & 1) != 0) << "pid " << pid << " path " << v << " frame " << k;
      }
    }
  }
  EXPECT_EQ(processes_by_passes, (std::map<size_t, int>{{2, 1}, {3, 1}})) << "passes: the child's 2, the parent's 3";
}

TEST(Record, NoFollowTracesTheProgramOnly) {
  const std::string path = trace_path("nofollow");
  const Process r = run(kSpoor + " record --no-follow -o " + path + " -- " + SPOOR_CHILDREN);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "children exited with 12 in all\n");
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_EQ(traced_processes(*trace).size(), 1u);
}

TEST(Record, AProgramWithItsOwnMallocThreadsAndTimerSignalsIsUnchanged) {
  const Process plain = run(SPOOR_ROBUST);
  const Process traced = run(kSpoor + " record -o " + trace_path("robust") + " -- " + SPOOR_ROBUST);
  EXPECT_EQ(plain.status, 0);
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_NE(plain.out.find("total="), std::string::npos);
}

// A program whose own malloc maps memory while it holds its lock (as
// jemalloc linked into rustc does): the shim's mmap hook runs inside that
// allocator, and its stack capture must not allocate (the program would
// wait on its own lock; this one exits with 99 instead). The mappings are
// recorded with the stacks that made them.
TEST(Record, AProgramsOwnAllocatorThatMapsUnderItsLockIsNotReentered) {
  const std::string path = trace_path("own-allocator-maps");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_OWN_ALLOCATOR_MAPS);
  ASSERT_EQ(r.status, 0) << r.err;
  unsigned long long map_big = 0, map_through = 0;
  const size_t second_line = r.out.find('\n') + 1;
  EXPECT_EQ(r.out.substr(0, second_line), "mapped 8, sum 28, small blocks too\n");
  ASSERT_EQ(std::sscanf(r.out.c_str() + second_line, "map_big=%llx map_through=%llx", &map_big, &map_through), 2)
      << r.out;

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  std::map<uint64_t, std::vector<uint64_t>> stacks;  // id -> frames
  std::vector<uint64_t> big_map_stacks;              // the 8 blocks of 3 MiB and more
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    if (e.descriptor->name == "Stack") {
      stacks[std::get<uint64_t>(*e.field("id"))] = stack_frames(e);
    } else if (e.descriptor->name == "Mmap" && std::get<uint64_t>(*e.field("size")) >= (3u << 20)) {
      big_map_stacks.push_back(std::get<uint64_t>(*e.field("stack")));
    }
  }
  ASSERT_EQ(big_map_stacks.size(), 8u);
  for (const uint64_t id : big_map_stacks) {
    const std::vector<uint64_t>& frames = stacks[id];
    auto has_frame_in = [&](uint64_t fn) {
      return std::any_of(frames.begin(), frames.end(), [&](uint64_t ip) { return ip > fn && ip < fn + 128; });
    };
    EXPECT_TRUE(has_frame_in(map_big)) << "stack " << id << " of " << frames.size() << " frames";
    EXPECT_TRUE(has_frame_in(map_through)) << "stack " << id;
  }
  // Its heap calls never reach the hooks: the summary and the report say
  // so, naming the executable whose malloc it is.
  const std::string binary = std::filesystem::canonical(SPOOR_OWN_ALLOCATOR_MAPS).string();
  EXPECT_NE(r.err.find("heap calls not recorded (the program's own malloc, which LD_PRELOAD cannot wrap; its mmap "
                       "calls are recorded): " + binary + "\n"),
            std::string::npos)
      << r.err;
  const Process j = run(kSpoor + " report --heap --format json " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json report = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << j.out;
  ASSERT_EQ(report["heap"].size(), 1u) << j.out.substr(0, 2000);
  EXPECT_EQ(report["heap"][0].value("own_allocator", ""), binary);
  EXPECT_GE(report["heap"][0]["mmap"]["calls"].get<uint64_t>(), 8u) << "the 8 blocks, at least";
  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_NE(text.out.find("not recorded: the allocator calls of pid "), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

// A non-PIE executable that takes malloc's address (node does) has its PLT
// entry as malloc's address for everyone, dlsym included, yet its calls
// reach the shim: they are recorded, and nothing says otherwise.
TEST(Record, AnExecutableThatTakesMallocsAddressIsNotTakenForItsOwnAllocator) {
  const std::string path = trace_path("malloc-address");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_MALLOC_ADDRESS);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "50 blocks\n");
  EXPECT_EQ(r.err.find("heap calls not recorded"), std::string::npos) << r.err;

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  reader::EventReader events(trace.value());
  reader::Event e;
  int blocks = 0, own_allocator = 0;
  while (events.next(e)) {
    if (e.descriptor->name == "OwnAllocator") ++own_allocator;
    if (e.descriptor->name != "Alloc") continue;
    const uint64_t size = std::get<uint64_t>(*e.field("size"));
    if (size >= 5000 && size < 5050) ++blocks;
  }
  EXPECT_EQ(blocks, 50) << "each block the program allocated through malloc's address";
  EXPECT_EQ(own_allocator, 0);
  const Process text = run(kSpoor + " report --heap " + path);
  EXPECT_EQ(text.out.find("not recorded"), std::string::npos) << text.out;
  std::filesystem::remove(path);
}

TEST(Record, TheProgramKeepsItsEnvironment) {
  // Variables of its own, SPOOR_* ones included, reach the program and its
  // children.
  const Process r = run("SPOOR_MINE=kept OTHER=also " + kSpoor + " record -o " + trace_path("env") +
                        " -- sh -c 'echo $SPOOR_MINE $OTHER; sh -c \"echo \\$SPOOR_MINE\"'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "kept also\nkept\n");
}

// The tracing settings (LD_PRELOAD, SPOOR_SOCKET, ...) reach every process
// of the tree, yet none of them shows them: the program's environment, and
// that of each child however it was started, print as they do untraced, in
// the same order, and a preload of the caller's own stays.
TEST(Record, NoProcessOfTheTreeSeesTheTracingSettings) {
  for (const std::string caller_preload : {"", "LD_PRELOAD=libm.so.6 "}) {
    const std::string path = trace_path("env-children");
    const std::string env = caller_preload + "SPOOR_MINE=kept ";
    const Process untraced = run(env + SPOOR_ENV_CHILDREN);
    const Process traced = run(env + kSpoor + " record -o " + path + " -- " + SPOOR_ENV_CHILDREN);
    ASSERT_EQ(untraced.status, 0) << untraced.err;
    ASSERT_EQ(traced.status, 0) << traced.err;
    EXPECT_EQ(traced.out, untraced.out);
    EXPECT_EQ(traced.out.find("SPOOR_SOCKET"), std::string::npos) << traced.out;
    EXPECT_NE(traced.out.find("SPOOR_MINE=kept"), std::string::npos) << traced.out;
    EXPECT_EQ(traced.out.find("LD_PRELOAD") != std::string::npos, !caller_preload.empty()) << traced.out;
    // Every child was traced all the same: the program, system()'s and
    // popen()'s shells (and the env each may start), the fork, the spawn.
    auto trace = reader::Trace::open(path);
    ASSERT_TRUE(trace) << trace.error();
    size_t envs = 0;
    for (const reader::Process* p : traced_processes(*trace))
      envs += !p->arguments.empty() && p->arguments[0] == "env";
    EXPECT_EQ(envs, 4u) << "each of the four children ran env traced";
    std::filesystem::remove(path);
  }
  // bash defines its own unsetenv and reads main's envp: its exported
  // variables are what it was given too.
  const std::string export_list = "bash -c 'export -p; bash -c \"export -p\"'";
  const Process untraced = run(export_list);
  const Process traced = run(kSpoor + " record -o " + trace_path("env-bash") + " -- " + export_list);
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, untraced.out);
  std::filesystem::remove(trace_path("env-bash"));
}

// ldd has the loader list a program's libraries (LD_TRACE_LOADED_OBJECTS):
// the shim is not among them, though ldd's own shell is traced.
TEST(Record, LddListsTheLibrariesItListsUntraced) {
  const auto without_addresses = [](std::string text) {
    for (size_t at; (at = text.find(" (0x")) != std::string::npos;) text.erase(at, text.find(')', at) + 1 - at);
    return text;
  };
  const std::string program = SPOOR_HEAP_COUNTS;
  const Process untraced = run("ldd " + program);
  const Process traced = run(kSpoor + " record -o " + trace_path("ldd") + " -- ldd " + program);
  ASSERT_EQ(untraced.status, 0) << untraced.err;
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(without_addresses(traced.out), without_addresses(untraced.out));
  EXPECT_NE(traced.out.find("libc.so"), std::string::npos) << traced.out;
  EXPECT_NE(traced.err.find(" processes, "), std::string::npos) << "ldd's shells were traced: " << traced.err;
  // ldd runs the loader as a program (--verify): it reads LD_PRELOAD for
  // the program it loads, so it is not named as a static binary. Where a
  // 32-bit loader is installed ldd runs it too, and that one is named.
  std::istringstream lines(traced.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("not traced") != std::string::npos) {
      EXPECT_NE(line.find("(32-bit x86 program)"), std::string::npos) << traced.err;
    }
  }
  std::filesystem::remove(trace_path("ldd"));

  // The loader run as a program by a traced shell: the program it loads is traced.
  const std::string path = trace_path("loader");
  const Process loaded = run(kSpoor + " record -o " + path + " -- sh -c '/lib64/ld-linux-x86-64.so.2 " + program +
                             " 100; true'");
  EXPECT_EQ(loaded.status, 0) << loaded.err;
  EXPECT_EQ(loaded.err.find("not traced"), std::string::npos) << loaded.err;
  EXPECT_NE(loaded.err.find("2 processes, "), std::string::npos) << loaded.err;
  std::filesystem::remove(path);
}

// A CPU sample may land while glibc's malloc runs outside the shim (the
// real malloc under a hook, libc's own calls). Its handler must not take
// the samples deferred meanwhile: their stacks may need an unwind rule
// built with libdw, which allocates, and a malloc inside the interrupted
// one corrupts the heap (bash aborted in sysmalloc, a few times in 200
// command substitutions at 10 kHz). Every pipeline must give its answer.
TEST(Record, ASampleThatInterruptsMallocLeavesTheHeapWhole) {
  const std::string script = spoor::test::temp_path("rec-sample-heap.sh");
  std::ofstream(script) << "bad=0\n"
                           "for i in $(seq 200); do\n"
                           "  x=$(printf '1\\n2\\n3\\n' | sort -r | tr '\\n' ' ')\n"
                           "  [ \"$x\" = \"3 2 1 \" ] || bad=$((bad + 1))\n"
                           "done\n"
                           "echo \"failed: $bad\"\n";
  const Process r = run(kSpoor + " record --sample-hz 10000 -o " + trace_path("sample-heap") + " -- bash " + script);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "failed: 0\n") << r.err;
  for (const char* crash : {"malloc(): ", "Fatal glibc error", "Segmentation fault", "Aborted"})
    EXPECT_EQ(r.err.find(crash), std::string::npos) << r.err;
  std::filesystem::remove(script);
  std::filesystem::remove(trace_path("sample-heap"));
}

// The program's own handler interrupts malloc thousands of times and
// calls write there, whose stack the shim captures: building an unwind
// rule for it would allocate inside the interrupted malloc. Before, 2 runs
// in 3 aborted in sysmalloc on a busy machine (1 in 4 beside two CPU hogs;
// on a quiet one it rarely showed): the window is narrow, so this test
// catches a regression often, not always. Sampling is off: this is the
// program's handler alone.
TEST(Record, AHandlerThatInterruptsMallocAndWritesLeavesTheHeapWhole) {
  const std::string program = SPOOR_HANDLER_DURING_MALLOC;
  const Process untraced = run(program);
  const Process traced =
      run(kSpoor + " record --sample-hz 0 -o " + trace_path("handler-malloc") + " -- " + program);
  ASSERT_EQ(untraced.status, 0) << untraced.err;
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, untraced.out) << traced.err;
  EXPECT_EQ(traced.err.find("Fatal glibc error"), std::string::npos) << traced.err;
  std::filesystem::remove(trace_path("handler-malloc"));
}

// Every traced process runs the shim's constructors. libgcc's CPU model
// (pulled in by __builtin_cpu_supports) would add one that asks the CPU a
// dozen and more cpuid questions, each a trap to the hypervisor on a
// virtual machine (~6.6 us here): the shim asks its one question (SSE4.2,
// for CRC-32C) when it first checksums, if ever.
TEST(Record, TheShimLinksNoCpuModelConstructor) {
  const Process symbols = run(std::string("nm ") + SPOOR_SHIM);
  ASSERT_EQ(symbols.status, 0) << symbols.err;
  ASSERT_NE(symbols.out.find(" T malloc\n"), std::string::npos) << "nm lists the shim's symbols";
  EXPECT_EQ(symbols.out.find("__cpu_indicator_init"), std::string::npos);
  EXPECT_EQ(symbols.out.find("__cpu_model"), std::string::npos);
}

// Unwind rules are kept for the whole recording (preload/shared_rules.h):
// each traced image maps the one store the recorder made.
TEST(Record, EveryTracedImageMapsTheRecordingsOneRuleStore) {
  const Process r = run(kSpoor + " record -o " + trace_path("rule-store") +
                        " -- sh -c 'cat /proc/self/maps; cat /proc/self/maps'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> inodes;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/memfd:spoor-rules") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode;
    fields >> range >> perms >> offset >> device >> inode;
    EXPECT_EQ(perms, "rw-s") << line;
    inodes.push_back(inode);
  }
  ASSERT_EQ(inodes.size(), 2u) << "one mapping in each cat\n" << r.out;
  EXPECT_EQ(inodes[0], inodes[1]) << "the two images map different stores";
}

// libdw is loaded by a process only when a rule it needs is not in the
// recording's store yet (shim/libdw_loader.h): the first cat reads its
// own code's rules with it; the second finds them all in the store and
// never maps it. Without CPU samples: a sample needs the rule of whatever
// instruction it interrupted, and one of the second cat's may land where
// none of the first's did (once in ~60 runs on a loaded machine).
TEST(Record, OnlyAProcessThatBuildsUnwindRulesLoadsLibdw) {
  const Process r = run(kSpoor + " record --sample-hz 0 -o " + trace_path("lazy-libdw") +
                        " -- sh -c 'cat /proc/self/maps; echo end-of-maps; cat /proc/self/maps'");
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t split = r.out.find("end-of-maps\n");
  ASSERT_NE(split, std::string::npos) << r.out;
  const std::string first = r.out.substr(0, split), second = r.out.substr(split);
  ASSERT_NE(second.find("libspoor-preload"), std::string::npos) << "the second cat is traced\n" << second;
  EXPECT_NE(first.find("/libdw"), std::string::npos) << "the first cat built rules\n" << first;
  EXPECT_EQ(second.find("/libdw"), std::string::npos) << "the second cat found its rules in the store\n" << second;
  EXPECT_EQ(second.find("/libelf"), std::string::npos) << second;
}

// Under a small --stack-depth every capture is cut at its frame limit: the
// stack beyond the cut is walked once more to see whether loading libdw is
// safe there, so the process still loads it and builds its rules (without,
// each capture whose rule needed libdw went to libunwind).
TEST(Record, AProcessWhoseCapturesAreAllCutStillLoadsLibdw) {
  const Process r = run(kSpoor + " record --stack-depth 1 -o " + trace_path("lazy-libdw-cut") + " -- cat /proc/self/maps");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_NE(r.out.find("libspoor-preload"), std::string::npos) << "cat is traced\n" << r.out;
  EXPECT_NE(r.out.find("/libdw"), std::string::npos) << "cat built rules\n" << r.out;
}

// The unwind rules a recording built are kept for the next one
// (preload/record/rule_cache_file.h): a later recording's cat finds its
// rules and never maps libdw. --no-rule-cache neither reads nor writes the
// file; a damaged file is ignored and replaced. Recorded without CPU
// samples: a sample needs the rule of whatever instruction it interrupts,
// so which rules a run builds varied by a few with where its samples
// landed, and a later cat now and then needed one no earlier run built.
// (One later recording of two that finds them all shows the rules were
// kept; without them every recording maps libdw.)
// The shim links the C++ runtime and libgcc's unwinder in, hidden
// (preload/CMakeLists.txt): a C program traced maps neither libstdc++ nor
// libgcc_s for it, nor libzstd (the recorder's), each one more object to
// map and relocate at every process start.
TEST(Record, AProgramInCLoadsNoRuntimeForTheShim) {
  const Process r =
      run(kSpoor + " record --sample-hz 0 -o " + trace_path("c-runtime") + " -- cat /proc/self/maps");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_NE(r.out.find("libspoor-preload"), std::string::npos) << "cat is traced\n" << r.out;
  for (const char* library : {"/libstdc++", "/libgcc_s", "/libzstd"})
    EXPECT_EQ(r.out.find(library), std::string::npos) << library << " mapped for the shim\n" << r.out;
  std::filesystem::remove(trace_path("c-runtime"));
}

TEST(Record, UnwindRulesAreKeptForTheNextRecording) {
  const std::string dir = spoor::test::temp_path("rule-cache");
  std::filesystem::remove_all(dir);
  const std::string cache = dir + "/cache/unwind-rules";
  const std::string with_cache = "SPOOR_RULE_CACHE=" + cache + " ";
  auto maps_libdw = [&](const std::string& env, const std::string& options) {
    const Process r = run(env + kSpoor + " record --sample-hz 0 " + options + " -o " + trace_path("rule-cache") +
                          " -- cat /proc/self/maps");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("libspoor-preload"), std::string::npos) << "cat is traced\n" << r.out;
    return r.out.find("/libdw") != std::string::npos;
  };
  auto contents = [&] {
    std::ifstream f(cache, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  EXPECT_TRUE(maps_libdw(with_cache, "")) << "nothing kept yet: cat builds its rules";
  ASSERT_TRUE(std::filesystem::exists(cache)) << "written at the end, its directory made";
  const std::string kept = contents();
  ASSERT_GT(kept.size(), 32u) << "a header and some rules";
  EXPECT_EQ(kept.substr(0, 4), "SPRC");
  EXPECT_EQ((kept.size() - 32) % 24, 0u) << "whole entries";
  const bool second = maps_libdw(with_cache, ""), third = maps_libdw(with_cache, "");
  EXPECT_FALSE(second && third) << "a later recording's cat found its rules";

  // Not read, not written.
  const auto before = std::filesystem::last_write_time(cache);
  EXPECT_TRUE(maps_libdw(with_cache, "--no-rule-cache"));
  EXPECT_EQ(std::filesystem::last_write_time(cache), before);
  EXPECT_TRUE(maps_libdw("SPOOR_RULE_CACHE=off ", ""));
  EXPECT_EQ(std::filesystem::last_write_time(cache), before);

  // One byte of a rule changed: the checksum no longer holds, the file is
  // ignored (cat builds its rules again) and written anew.
  std::string damaged = contents();
  damaged[40] = static_cast<char>(damaged[40] ^ 0xFF);
  std::ofstream(cache, std::ios::binary | std::ios::trunc) << damaged;
  EXPECT_TRUE(maps_libdw(with_cache, "")) << "a damaged file is not read";
  const std::string replaced = contents();
  EXPECT_NE(replaced, damaged) << "and was replaced";
  EXPECT_EQ(replaced.substr(0, 4), "SPRC");
  EXPECT_EQ((replaced.size() - 32) % 24, 0u);

  // Cut short (its header counts more rules than follow): ignored too.
  const std::string cut = replaced.substr(0, 32 + (replaced.size() - 32) / 24 / 2 * 24);
  std::ofstream(cache, std::ios::binary | std::ios::trunc) << cut;
  EXPECT_TRUE(maps_libdw(with_cache, "")) << "a cut-short file is not read";
  EXPECT_GT(contents().size(), cut.size()) << "and was replaced whole";
  std::filesystem::remove_all(dir);
}

TEST(Record, CodeInNoModuleIsUnwoundAndNamedByTheRuntimesPerfMap) {
  // jit_code.c: an allocation under a trampoline in anonymous executable
  // memory, which the program names in /tmp/perf-PID.map as a JIT does.
  // The stack goes through it to main. The recorder keeps the map in the
  // trace, so the report names the trampoline after the file is gone (a
  // trace read on another machine, or after /tmp was cleaned).
#if !defined(__x86_64__)
  GTEST_SKIP() << "the trampoline is x86-64 code";
#endif
  const std::string path = trace_path("jit-code");
  const Process r = run(kSpoor + " record -p heap -o " + path + " -- " + SPOOR_JIT_CODE);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string map = "/tmp/perf-" + r.out.substr(0, r.out.find('\n')) + ".map";
  ASSERT_TRUE(std::filesystem::remove(map)) << map;
  EXPECT_NE(r.err.find("kept 1 JIT symbol map (/tmp/perf-PID.map, "), std::string::npos) << r.err;
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "--heap", path);
  const Process symbolized = run(kSpoor + " symbolize --trace " + path);
  EXPECT_NE(symbolized.out.find("spoor_test_jit_trampoline (JIT code, perf map)"), std::string::npos)
      << symbolized.out;
  ASSERT_EQ(report.failure, "");
  std::vector<std::string> names;
  for (const nlohmann::json& site : report.report.at("heap").at(0).at("top_by_bytes")) {
    std::vector<std::string> frames;
    for (const nlohmann::json& f : site.at("frames")) frames.push_back(f.at("function").get<std::string>());
    if (std::find(frames.begin(), frames.end(), "allocate_block") != frames.end()) names = frames;
  }
  const auto at = std::find(names.begin(), names.end(), "allocate_block");
  ASSERT_NE(at, names.end()) << report.report.at("heap").at(0).at("top_by_bytes").dump();
  ASSERT_LT(at + 2, names.end());
  EXPECT_EQ(at[1], "spoor_test_jit_trampoline");
  EXPECT_EQ(at[2], "main");
}

TEST(Record, TheHeapReportSaysCPythonKeepsSmallObjectsInItsOwnPools) {
  // 20,000 strings of 50-250 characters: CPython's pymalloc serves each
  // from its pools, never through malloc, unless PYTHONMALLOC=malloc.
  if (!spoor::test::have_program("python3")) GTEST_SKIP() << "python3 is not installed";
  const std::string script = "python3 -c 'd = [str(i) * 50 for i in range(20000)]; print(len(d))'";
  // The CPython image's alloc calls (the one that made most, past a
  // launcher such as pyenv's shell scripts), and whether the report said so.
  const auto python_calls = [&](const std::string& name, const std::string& environment) {
    const std::string path = trace_path(name);
    const Process r = run(environment + kSpoor + " record -p heap,process -o " + path + " -- " + script);
    EXPECT_EQ(r.out, "20000\n") << r.err;
    const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "--heap", path);
    EXPECT_EQ(report.failure, "");
    uint64_t calls = 0;
    for (const nlohmann::json& image : report.report.value("heap", nlohmann::json::array()))
      if (image.value("cpython", false)) calls = std::max(calls, image.at("calls").at("alloc").get<uint64_t>());
    const Process text = run(kSpoor + " report --heap " + path);
    EXPECT_NE(text.out.find("CPython: unless it ran with PYTHONMALLOC=malloc, objects of up to 512 bytes"),
              std::string::npos)
        << text.out;
    return calls;
  };
  const uint64_t pooled = python_calls("cpython-pools", "");
  const uint64_t every_object = python_calls("cpython-malloc", "PYTHONMALLOC=malloc ");
  EXPECT_GT(pooled, 0u) << "the interpreter's image is told apart";
  EXPECT_LT(pooled, 20000u) << "the strings come from pymalloc's pools";
  EXPECT_GT(every_object, 20000u) << "the report's advice counts every object";

  // A C program's report has no such note.
  const std::string path = trace_path("cpython-none");
  ASSERT_EQ(run(kSpoor + " record -p heap -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 1000").status, 7);
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "--heap", path);
  ASSERT_EQ(report.failure, "");
  EXPECT_FALSE(report.report.at("heap").at(0).contains("cpython"));
}

TEST(Record, VforkChildrenKnownOnlyFromTheirParentsWaitAreItsChildren) {
  // vfork_exec_failed.c: three vfork children whose exec fails (_exit 127),
  // which write no event, then one that runs /bin/true. The report puts
  // all four under the program, the first three named for what they are.
  const std::string path = trace_path("vfork-exec-failed");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_VFORK_EXEC_FAILED);
  ASSERT_EQ(r.status, 0) << r.err;
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "--threads", path);
  ASSERT_EQ(report.failure, "");
  const nlohmann::json& procs = report.report.at("processes");
  uint64_t root = 0;
  for (const nlohmann::json& p : procs)
    if (p.at("command_line").get<std::string>() == SPOOR_VFORK_EXEC_FAILED) root = p.at("pid").get<uint64_t>();
  ASSERT_NE(root, 0u) << procs.dump();
  int failed = 0, ran = 0;
  for (const nlohmann::json& p : procs) {
    if (p.at("pid").get<uint64_t>() == root) continue;
    EXPECT_EQ(p.at("ppid").get<uint64_t>(), root) << p.dump();
    const std::string command = p.at("command_line").get<std::string>();
    if (command == "/bin/true") ++ran;
    if (command.find("a vfork child") != std::string::npos && p.at("exit").at("exit_code").get<int>() == 127) ++failed;
  }
  EXPECT_EQ(failed, 3) << procs.dump();
  EXPECT_EQ(ran, 1) << procs.dump();
}

// A failed dlsym leaves an error text that glibc frees inside the next
// dlsym. When that next dlsym is the shim looking up free itself (the
// program's first free comes from dlerror's bookkeeping, before any
// constructor: a clang UBSan runtime does this), the free hook used to
// look free up again from inside the lookup, without end, and the program
// died of a stack overflow before main.
TEST(Record, AFailedLookupBeforeConstructorsDoesNotLoopTheFreeHook) {
  const Process alone = run(SPOOR_LOOKUP_FAILED_FIRST);
  ASSERT_EQ(alone.status, 0);
  ASSERT_EQ(alone.out, "undefined symbol\nok\n");
  const Process traced = run(kSpoor + " record -o " + trace_path("lookup-failed") + " -- " + SPOOR_LOOKUP_FAILED_FIRST);
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, alone.out) << traced.err;
  EXPECT_NE(traced.err.find("1 process,"), std::string::npos) << traced.err;
  std::filesystem::remove(trace_path("lookup-failed"));
}

}  // namespace
