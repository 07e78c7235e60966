// spoor record end to end: the real tool, the real shim, programs whose
// allocator calls are known, read back with the reader.
#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
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
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;

using spoor::test::Process;
using spoor::test::run;

std::string trace_path(const std::string& name) { return spoor::test::temp_path("rec-" + name + ".spoor"); }

// A Stack event's frames: 64-bit return addresses, innermost first.
std::vector<uint64_t> stack_frames(const reader::Event& e) {
  const auto blob = std::get<reader::Blob>(*e.field("frames")).bytes;
  std::vector<uint64_t> frames(blob.size() / 8);
  std::memcpy(frames.data(), blob.data(), frames.size() * 8);
  return frames;
}

struct HeapCounts {
  std::map<std::string, uint64_t> calls;  // by event name
  uint64_t alloc_bytes = 0;
  uint64_t events = 0;
  std::vector<uint64_t> exit_signals;  // of the ProcessExit events, in order
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
    if (e.descriptor->name == "ProcessExit") c.exit_signals.push_back(std::get<uint64_t>(*e.field("signal")));
  }
  return c;
}

const std::string kSpoor = SPOOR_TOOL;

// The processes of the traced tree: every one but spoor record itself
// (which writes the ProcessExit events of the processes it reaps).
std::vector<const reader::Process*> traced_processes(const reader::Trace& trace) {
  std::vector<const reader::Process*> out;
  for (const reader::Process& p : trace.processes())
    if (!(p.arguments.size() == 2 && p.arguments[0] == "spoor" && p.arguments[1] == "record")) out.push_back(&p);
  return out;
}

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

// -o -: the trace goes to standard output, for a reader on a pipe; the
// program's own standard output goes to standard error, unchanged.
TEST(Record, DashWritesTheTraceToStandardOutputAndTheProgramsOutputToStandardError) {
  const std::string file = trace_path("to-file");
  const std::string piped = trace_path("to-stdout");
  const Process to_file = run(kSpoor + " record -o " + file + " -- " + SPOOR_HEAP_COUNTS + " 1000 'hello, world'");
  const Process to_stdout = run(kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS + " 1000 'hello, world' > " + piped);
  EXPECT_EQ(to_stdout.status, 7) << to_stdout.err;
  EXPECT_NE(to_stdout.err.find("hello, world\n"), std::string::npos) << to_stdout.err;
  EXPECT_NE(to_stdout.err.find("written to standard output"), std::string::npos) << to_stdout.err;
  EXPECT_EQ(to_stdout.err.find("next: spoor report"), std::string::npos) << to_stdout.err;
  EXPECT_FALSE(std::filesystem::exists("-")) << "no file named '-'";
  HeapCounts a = count_heap(file);
  HeapCounts b = count_heap(piped);
  EXPECT_EQ(b.calls["Alloc"], 1002u);
  EXPECT_EQ(b.calls["Alloc"], a.calls["Alloc"]);
  EXPECT_EQ(b.alloc_bytes, a.alloc_bytes);

  // Read from the pipe as it is written.
  const Process info = run(kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS + " 1000 | " + kSpoor + " info -");
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("Alloc"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("trace      (standard input)"), std::string::npos) << info.out;
  const Process report = run(kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS + " 1000 | " + kSpoor + " report --heap -");
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("spoor report: (standard input)"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("1,002 alloc"), std::string::npos) << report.out;
  std::filesystem::remove(file);
  std::filesystem::remove(piped);
}

// A reader that goes away early (true exits at once; the program first
// sleeps a second, so the first write comes after) fails the trace's writes (EPIPE), which
// spoor says and exits 127 for, after the program ran to its end; the
// recorder is not killed by SIGPIPE, and the program does not inherit an
// ignored SIGPIPE.
TEST(Record, AReaderThatGoesAwayIsAWriteErrorAndTheProgramRunsToItsEnd) {
  const Process r = run("bash -c '" + kSpoor +
                        " record -o - -- sh -c \"sleep 1; grep SigIgn /proc/self/status; echo ran-to-the-end\" | true;"
                        " echo status=${PIPESTATUS[0]}'");
  EXPECT_NE(r.out.find("status=127"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("writing the trace to standard output failed: Broken pipe"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ran-to-the-end"), std::string::npos) << r.err;
  const size_t ignored = r.err.find("SigIgn:");
  ASSERT_NE(ignored, std::string::npos) << r.err;
  const uint64_t mask = std::stoull(r.err.substr(ignored + 7), nullptr, 16);
  EXPECT_EQ(mask & (uint64_t{1} << (SIGPIPE - 1)), 0u) << r.err;
}

// A trace that outgrows the file size limit (as a full disk would: the
// write fails, here with EFBIG) is said while the program runs, which runs
// on to its end with its output; the summary still tells how it ended, and
// the file keeps what was written before, readable up to the cut. spoor
// exits 127, and is not killed by SIGXFSZ. The program's processes stop
// tracing: nothing more could be written.
TEST(Record, AFailedWriteIsSaidAtOnceAndTheFileKeepsWhatCameBefore) {
  const std::string path = trace_path("file-size-limit");
  const Process r = run("bash -c 'ulimit -f 32768; " + kSpoor + " record --buffer-size 256K --wait-when-full --compress none -o " +
                        path + " -- sh -c \"" + SPOOR_HEAP_COUNTS +
                        " 2000000; sleep 1; echo ran-to-the-end >&2\" 2>&1; echo status=$?'");
  EXPECT_NE(r.out.find("status=127"), std::string::npos) << r.out << r.err;
  const size_t failed =
      r.out.find("writing '" + path + "' failed: File too large; the program runs on, untraced from now on");
  const size_t ran = r.out.find("ran-to-the-end");
  ASSERT_NE(failed, std::string::npos) << r.out;
  ASSERT_NE(ran, std::string::npos) << r.out;
  EXPECT_LT(failed, ran) << "said while the program ran: " << r.out;
  EXPECT_NE(r.out.find("'sh' (pid "), std::string::npos) << r.out;
  // Tracing stops with the file: the program's 2,000,000 allocations and
  // frees after the cut (of 4,000,000 events in all) are not recorded for
  // nothing, and the `sleep` sh starts afterwards is not traced.
  const size_t taken_at = r.out.find(" events taken from the rings, ");
  ASSERT_NE(taken_at, std::string::npos) << r.out;
  const size_t processes_at = r.out.rfind("processes, ", taken_at);
  ASSERT_NE(processes_at, std::string::npos) << r.out;
  const uint64_t taken = std::stoull(r.out.substr(processes_at + 11, taken_at - processes_at - 11));
  EXPECT_LT(taken, 3'000'000u) << r.out;
  EXPECT_NE(r.out.find("spoor record: 2 processes, "), std::string::npos) << "sh and the program: " << r.out;
  EXPECT_NE(r.out.find(", only 32.0 MiB written to " + path), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the trace ends after 33554432 bytes"), std::string::npos) << r.out;
  EXPECT_EQ(std::filesystem::file_size(path), 32u << 20);
  const Process info = run(kSpoor + " info " + path);
  EXPECT_NE(info.status, 0) << "a cut trace is damaged: " << info.out;
  EXPECT_NE(info.err.find("events recovered"), std::string::npos) << info.err;
  EXPECT_NE(info.out.find("Alloc"), std::string::npos) << info.out;
  std::filesystem::remove(path);
}

// A process that loads the shim but never takes the rings it is given (a
// shim of another Spoor build, whose region format differs; here, rings
// that the address-space limit keeps a subshell from mapping beside its
// parent's) ran untraced, and the summary counted it as traced with no
// word. It is named now, and not counted. The limit leaves the parent
// room for its own rings and half as much again, so that it runs on; with
// the rule cache off its walks need libdw, which is not used so near a
// limit (glibc aborted the process when libelf's thread-local data could
// not be allocated).
TEST(Record, AProcessThatNeverTookItsRingsIsNamed) {
  const std::string path = trace_path("never-attached");
  const long rings_kib = 64 * 1024 * sysconf(_SC_NPROCESSORS_CONF);
  const std::string limit = std::to_string(rings_kib * 3 / 2 + 24 * 1024);
  const Process r = run("SPOOR_RULE_CACHE=off " + kSpoor + " record --buffer-size 64M -o " + path +
                        " -- sh -c 'ulimit -v " + limit + "; (echo child-ran); echo status=$?'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "child-ran\nstatus=0\n") << r.err;
  const size_t said = r.err.find("spoor record: not traced, no events from it (pid ");
  ASSERT_NE(said, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("never took the rings spoor gave it", said), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spoor record: 1 process, "), std::string::npos) << "sh alone: " << r.err;
  std::filesystem::remove(path);
}

// Packed runs are counted as packed, not written: after a failed write the
// zstd line said it packed more than the file could hold, with no word.
TEST(Record, AfterAFailedWriteThePackedFigureSaysTheFileHoldsLess) {
  // A reader of -o - that takes 1,000 bytes and goes: the trace packs to
  // far more than the pipe held when the write failed.
  const Process r = run("bash -c '" + kSpoor + " record -o - -- " + SPOOR_HEAP_COUNTS +
                        " 200000 ran | head -c 1000 >/dev/null'");
  EXPECT_NE(r.err.find("writing the trace to standard output failed: Broken pipe"), std::string::npos) << r.err;
  const size_t packed = r.err.find("spoor record: zstd packed ");
  ASSERT_NE(packed, std::string::npos) << r.err;
  const std::string line = r.err.substr(packed, r.err.find('\n', packed) - packed);
  EXPECT_NE(line.find("(the file holds only what came before the cut)"), std::string::npos) << r.err;
}

// A limit below the rings' size: the program runs untraced, and the
// summary says why, not that it ignored LD_PRELOAD.
TEST(Record, RingsTheFileSizeLimitForbidsAreSaidSo) {
  const std::string path = trace_path("rings-limit");
  const Process r = run("bash -c 'ulimit -f 1024; " + kSpoor + " record --buffer-size 4M -o " + path + " -- " +
                        SPOOR_HEAP_COUNTS + " 10 ran; echo status=$?'");
  EXPECT_NE(r.out.find("ran\nstatus=7"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("the program was not traced, no events from it: cannot create a shared region: File too "
                       "large (the file size limit, ulimit -f, is below the rings'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("static or setuid"), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

TEST(Record, DashToATerminalIsAUsageError) {
  const Process r = run("script -qec '" + kSpoor + " record -o - -- true' /dev/null");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("which is a terminal"), std::string::npos) << r.out;
}

// A program that does little but allocate spends much of its CPU time in
// the shim: its samples there are one row of the CPU profile, named, and
// the report says what that row is.
TEST(Record, TheTracersOwnTimeIsOneNamedRowOfTheProfile) {
  const std::string path = trace_path("tracer-time");
  const Process r = run(kSpoor + " record --sample-hz 1000 -o " + path + " -- " + SPOOR_HEAP_COUNTS + " 1000000");
  ASSERT_EQ(r.status, 7) << r.err;
  const Process j = run(kSpoor + " report --cpu --format json " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json report = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << j.out;
  uint64_t tracer = 0;
  for (const nlohmann::json& f : report["cpu"]["functions"])
    if (f["function"] == "[spoor: recording the event]") tracer = f["self"].get<uint64_t>();
  EXPECT_GT(tracer, 0u) << report["cpu"]["functions"].dump(1);
  const Process text = run(kSpoor + " report --cpu " + path);
  EXPECT_NE(text.out.find("is the time the program's threads spent in Spoor's hooks recording events"), std::string::npos)
      << text.out;
  std::filesystem::remove(path);
}

// A signal handler's calls while the program's thread was inside the
// shim's hooks (most of them, in an allocation loop): each allocation,
// mapping and write is recorded all the same (an allocation or a mapping
// with the handler's call site as its stack), and each fflush, which cannot be recorded
// there (the stdio layer keeps per-thread state), is counted as lost.
// Before, all of them were dropped unseen. sigaction, signal and the rest
// still report the program's own handlers, whichever of glibc's functions
// installed them.
void expect_handler_calls_recorded_or_counted(const std::string& installer) {
  SCOPED_TRACE(installer);
  const std::string path = trace_path("handler-calls-" + installer);
  const Process r =
      run(kSpoor + " record --sample-hz 0 -o " + path + " -- " + SPOOR_HANDLER_CALLS + " 2000 " + installer);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const char* check : {"sigaction reports the handler", "signal reports the handler", "signal reports SIG_DFL",
                            "sysv_signal reports the handler", "sigset holds and releases",
                            "bsd_signal reports the handler", "a vfork child's handler stays its own"})
    EXPECT_NE(r.out.find(std::string("ok ") + check + "\n"), std::string::npos) << check << "\n" << r.out;
  const size_t at = r.out.find("handled ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const uint64_t handled = std::stoull(r.out.substr(at + 8));
  ASSERT_GE(handled, 2000u);

  uint64_t mallocs = 0, aligned = 0, maps = 0, unmaps = 0, writes = 0, flushes = 0, one_frame = 0;
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  reader::EventReader events(trace.value());
  reader::Event e;
  std::map<uint64_t, size_t> stack_depths;
  std::vector<uint64_t> handler_stacks;
  while (events.next(e)) {
    const std::string& name = e.descriptor->name;
    if (name == "Stack") {
      stack_depths[std::get<uint64_t>(*e.field("id"))] = std::get<reader::Blob>(*e.field("frames")).bytes.size() / 8;
    } else if (name == "Alloc") {
      const uint64_t size = std::get<uint64_t>(*e.field("size"));
      if (size == 4000) ++mallocs;
      if (size == 3000) ++aligned;
      if (size == 4000 || size == 3000) handler_stacks.push_back(std::get<uint64_t>(*e.field("stack")));
    } else if (name == "Write" && std::get<int64_t>(*e.field("result")) == 1) {
      ++writes;
    } else if (name == "FFlush") {
      ++flushes;
    } else if (name == "Mmap" && std::get<uint64_t>(*e.field("size")) == 12288) {
      ++maps;
      handler_stacks.push_back(std::get<uint64_t>(*e.field("stack")));
    } else if (name == "Munmap" && std::get<uint64_t>(*e.field("size")) == 12288) {
      ++unmaps;
    }
  }
  EXPECT_EQ(mallocs, handled);
  EXPECT_EQ(aligned, handled);
  EXPECT_EQ(maps, handled);
  EXPECT_EQ(unmaps, handled);
  for (const uint64_t id : handler_stacks) {
    EXPECT_NE(id, 0u);
    if (stack_depths[id] == 1) ++one_frame;
  }
  EXPECT_GT(one_frame, 0u) << "some calls interrupted the shim";
  EXPECT_EQ(writes, handled);
  // The flushes not recorded are the run's only lost events.
  const size_t lost_at = r.err.find(" lost");
  ASSERT_NE(lost_at, std::string::npos) << r.err;
  const size_t lost_from = r.err.rfind(' ', lost_at - 1) + 1;
  const uint64_t lost = std::stoull(r.err.substr(lost_from, lost_at - lost_from));
  EXPECT_EQ(flushes + lost, handled) << r.err;
  EXPECT_NE(r.err.find(" lost (stdio calls a signal handler made while its thread was inside Spoor's hooks"),
            std::string::npos)
      << "the summary names the cause, which the shim counts apart from full rings: " << r.err;
  EXPECT_GT(lost, 0u) << "some flushes interrupted the shim";
  std::filesystem::remove(path);
}

TEST(Record, CallsOfASignalHandlerThatInterruptedTheShimAreRecordedOrCounted) {
  expect_handler_calls_recorded_or_counted("sigaction");
  expect_handler_calls_recorded_or_counted("sigset");
  expect_handler_calls_recorded_or_counted("bsd_signal");
}

// A ring too small for the program's rate drops events: the summary
// counts them and names the cause and the cure (no signal handler here).
TEST(Record, EventsAFullRingDroppedAreCountedWithTheirCause) {
  const std::string path = trace_path("full-ring");
  const Process r = run(kSpoor + " record --sample-hz 0 --buffer-size 256K -o " + path + " -- " + SPOOR_HEAP_COUNTS +
                        " 3000000");
  ASSERT_EQ(r.status, 7) << r.err;
  const size_t lost_at = r.err.find(" lost (a ring was full: try --wait-when-full or a larger --buffer-size)");
  ASSERT_NE(lost_at, std::string::npos) << r.err;
  const size_t lost_from = r.err.rfind(' ', lost_at - 1) + 1;
  EXPECT_GT(std::stoull(r.err.substr(lost_from, lost_at - lost_from)), 0u) << r.err;
  std::filesystem::remove(path);
}

// The same ring with --wait-when-full: a writer that finds it full waits
// for the drain, so nothing is lost and every call of the program is there.
TEST(Record, WaitWhenFullLosesNothingFromAFullRing) {
  const std::string path = trace_path("wait-full");
  const Process r = run(kSpoor + " record --sample-hz 0 --buffer-size 256K --wait-when-full -o " + path + " -- " +
                        SPOOR_HEAP_COUNTS + " 3000000");
  ASSERT_EQ(r.status, 7) << r.err;
  EXPECT_NE(r.err.find(" 0 lost, "), std::string::npos) << r.err;
  const HeapCounts c = count_heap(path);
  EXPECT_EQ(c.calls.at("Alloc"), 3000000u + 2);  // the blocks, the array, the calloc
  EXPECT_EQ(c.calls.at("Free"), 3000000u + 2);
  std::filesystem::remove(path);
}

// The drain runs ahead of the program where it may (nice -5): the
// recorder's main thread, not the program, nor the packing threads. The
// program waits until the recorder has set it (it starts the program
// first), then prints the nice value of each: its own, then each of the
// recorder's threads, main thread first.
TEST(Record, TheDrainIsServedBeforeTheProgramAndThePackers) {
  if (geteuid() != 0) GTEST_SKIP() << "raising a priority takes root (or RLIMIT_NICE)";
  // What the program and the packers inherit: this test's own nice value.
  const std::string inherited = std::to_string(getpriority(PRIO_PROCESS, 0));
  const std::string script = spoor::test::temp_path("rec-drain-nice.sh");
  std::ofstream(script) << "for i in $(seq 200); do\n"
                           "  [ \"$(cut -d' ' -f19 /proc/$PPID/stat)\" = -5 ] && break; sleep 0.01\n"
                           "done\n"
                           "cut -d' ' -f19 /proc/$$/stat\n"
                           "cut -d' ' -f19 /proc/$PPID/task/$PPID/stat\n"
                           "for t in /proc/$PPID/task/*; do\n"
                           "  [ \"${t##*/}\" = $PPID ] || cut -d' ' -f19 $t/stat\n"
                           "done\n";
  const std::string path = trace_path("drain-nice");
  const Process r = run(kSpoor + " record -o " + path + " -- sh " + script);
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream out(r.out);
  std::string program, drain, other;
  out >> program >> drain;
  EXPECT_EQ(program, inherited) << r.out;
  EXPECT_EQ(drain, "-5") << r.out;
  int others = 0;
  while (out >> other) {
    EXPECT_EQ(other, inherited) << "a packing thread: " << r.out;
    ++others;
  }
  EXPECT_GT(others, 0) << r.out;
  std::filesystem::remove(path);
  std::filesystem::remove(script);
}

// The hooks' lock on the program's handlers is taken around fork: a child
// forked while another thread was inside sigaction can still install a
// handler (it would wait forever on the copied lock).
TEST(Record, AChildForkedWhileAnotherThreadSetsAHandlerCanSetItsOwn) {
  const std::string path = trace_path("sigaction-fork");
  const Process r = run(kSpoor + " record --sample-hz 0 -o " + path + " -- " + SPOOR_SIGACTION_FORK);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "children 100, stuck 0\n");
  std::filesystem::remove(path);
}

// How each child ended is in the trace however it was reaped: by a
// SIGCHLD handler that interrupted the shim's hooks (its wait calls were
// dropped as the shim's own), or inside glibc's system() and pclose(), where
// no hook sees the status (the child writes its own exit then, unless a
// signal killed it: system()'s and pclose()'s results say so).
TEST(Record, EveryChildsEndIsRecordedHoweverItWasReaped) {
  const std::string path = trace_path("reaped");
  const Process r = run(kSpoor + " record -o " + path + " -- " + SPOOR_REAPED);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "reaped 40, system 3, pclose 4, killed by 15 and 1\n");
  const Process j = run(kSpoor + " report --format json " + path);
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json report = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << j.out;
  std::map<std::string, int> endings;  // "ended" -> processes
  for (const nlohmann::json& p : report["processes"]) endings[p["ended"].get<std::string>()]++;
  // 20 killed children (only their reaper, the handler, can say so), 20
  // that exited with 1 + i % 7 for even i, sh -c 'exit 3' and 'exit 4',
  // the shells system() and popen() started that killed themselves, and
  // the program.
  const std::map<std::string, int> expected = {{"killed by SIGTERM", 21}, {"killed by SIGHUP", 1},
                                               {"exit 0", 1}, {"exit 1", 3},
                                               {"exit 2", 3},             {"exit 3", 4}, {"exit 4", 4},
                                               {"exit 5", 3},             {"exit 6", 2}, {"exit 7", 3}};
  EXPECT_EQ(endings, expected) << j.out.substr(0, 4000);
  std::filesystem::remove(path);
}

// A program that leaves a process running (a daemon, a background job):
// spoor record waits for it until told to stop (SIGTERM here, Ctrl-C at a
// terminal), and the trace then says it was still running, not that its
// exit went unrecorded.
TEST(Record, AProcessLeftRunningWhenTheWaitIsStoppedIsSaidToBeRunning) {
  const std::string path = trace_path("left-running"), out = spoor::test::temp_path("left-running.out");
  const Process r = run("sh -c '" + kSpoor + " record -o " + path +
                        " -- sh -c \"sleep 30 & echo started \\$!\" > " + out + " 2>&1 & s=$!; " +
                        "n=0; until grep -q \"waiting for the processes\" " + out +
                        " || [ $n -ge 600 ]; do sleep 0.05; n=$((n+1)); done; " +
                        "kill -TERM $s; wait $s; echo status=$?; cat " + out + "'");
  std::filesystem::remove(out);
  unsigned long sleeper = 0;
  const size_t at = r.out.find("started ");
  ASSERT_NE(at, std::string::npos) << r.out << r.err;
  sleeper = std::strtoul(r.out.c_str() + at + 8, nullptr, 10);
  ASSERT_GT(sleeper, 0u) << r.out;
  const bool was_running = kill(static_cast<pid_t>(sleeper), 0) == 0;
  kill(static_cast<pid_t>(sleeper), SIGKILL);
  EXPECT_TRUE(was_running) << "stopping the wait leaves the process running";
  EXPECT_NE(r.out.find("status=0"), std::string::npos) << r.out;
  const spoor::test::ReportJson report = spoor::test::report_json(kSpoor, "", path);
  ASSERT_TRUE(report.failure.empty()) << report.failure;
  std::map<std::string, std::string> ended;  // name -> how it ended
  for (const nlohmann::json& p : report.report["processes"]) {
    ended[p["name"].get<std::string>()] = p["ended"].get<std::string>();
    if (p["pid"] == sleeper) {
      EXPECT_EQ(p["running_at_end"], true);
      EXPECT_TRUE(p["exit"].is_null());
      // Its last event came at its start; it ran until the recording's
      // end, over 2 s later (spoor says it waits after 2 s).
      EXPECT_GE(p["duration_ns"].get<int64_t>(), 1'500'000'000) << p.dump();
    }
  }
  EXPECT_EQ(ended["sh"], "exit 0") << report.report["processes"].dump(1);
  EXPECT_EQ(ended["sleep"], "running at the end") << report.report["processes"].dump(1);
  std::filesystem::remove(path);
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
  EXPECT_EQ(c.exit_signals, std::vector<uint64_t>{static_cast<uint64_t>(signal)}) << "the trace says how it ended";
}

INSTANTIATE_TEST_SUITE_P(Signals, RecordCrash,
                         ::testing::Values(std::make_pair("segv", 11), std::make_pair("kill", 9),
                                           std::make_pair("abort", 6)));

// SIGTERM or SIGHUP sent to spoor record alone (timeout, kill, a closed
// terminal) goes on to the program; the recorder finishes the file once
// the program has ended, and exits as the program did.
TEST(Record, ATerminationSignalToTheRecorderIsPassedToTheProgram) {
  for (const int sig : {SIGTERM, SIGHUP}) {
    const std::string path = trace_path("terminated-" + std::to_string(sig));
    const Process r = run("sh -c '" + kSpoor + " record -o " + path + " -- sleep 30 & s=$!; sleep 1; kill -" +
                          std::to_string(sig) + " $s; wait $s; echo status=$?'");
    EXPECT_EQ(r.out, "status=" + std::to_string(128 + sig) + "\n") << r.err;
    EXPECT_NE(r.err.find("killed by signal " + std::to_string(sig)), std::string::npos) << r.err;
    const HeapCounts c = count_heap(path);
    EXPECT_EQ(c.exit_signals, std::vector<uint64_t>{static_cast<uint64_t>(sig)}) << "the trace says how it ended";
    const Process info = run(kSpoor + " info " + path);
    EXPECT_EQ(info.out.find("did not finish"), std::string::npos) << info.out;
  }
}

TEST(Record, AnInterruptSentToTheRecorderAloneReachesTheProgramOnce) {
  // kill -INT (and -QUIT) of spoor record alone, as pkill and timeout -s
  // INT send it: the program would never hear of it otherwise, and the
  // recording never end. env --default-signal: a background job of sh
  // starts with SIGINT ignored, and the program would inherit that.
  const std::string path = trace_path("interrupted"), out = spoor::test::temp_path("interrupted.out");
  // The signal goes once the program says its handler is in.
  const Process r = run("sh -c 'env --default-signal=INT " + kSpoor + " record -o " + path + " -- " +
                        SPOOR_INTERRUPTS + " > " + out + " & s=$!; " +
                        "n=0; until grep -q ready " + out + " || [ $n -ge 600 ]; do sleep 0.05; n=$((n+1)); done; " +
                        "kill -INT $s; wait $s; echo status=$?; cat " + out + "'");
  std::filesystem::remove(out);
  EXPECT_NE(r.out.find("sigint 1\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("status=0"), std::string::npos) << r.out << r.err;
  const Process info = run(kSpoor + " info " + path);
  EXPECT_EQ(info.out.find("did not finish"), std::string::npos) << info.out;
}

// Runs `argv` as the session leader of a new terminal, sends Ctrl-C once
// the output holds `ready`, and returns everything written to the
// terminal until every process of it let go.
std::string run_on_terminal_with_ctrl_c(const std::vector<std::string>& argv, const std::string& ready) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return "no terminal";
  const std::string name = ptsname(master);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    const int terminal = open(name.c_str(), O_RDWR);  // becomes the controlling terminal
    if (terminal < 0) _exit(126);
    dup2(terminal, 0);
    dup2(terminal, 1);
    dup2(terminal, 2);
    signal(SIGINT, SIG_DFL);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  std::string out;
  bool sent = false;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(master, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO: the terminal's last holder closed it
    out.append(buffer, static_cast<size_t>(n));
    if (!sent && out.find(ready) != std::string::npos) {
      const char ctrl_c = 3;  // VINTR: the terminal sends SIGINT to its foreground group
      sent = write(master, &ctrl_c, 1) == 1;
    }
  }
  waitpid(pid, nullptr, 0);
  close(master);
  return out;
}

TEST(Record, CtrlCOnTheTerminalReachesTheProgramOnce) {
  // The terminal sends SIGINT to spoor record and the program alike: the
  // recorder must not pass on a second one.
  const std::string path = trace_path("ctrl-c");
  const std::string out = run_on_terminal_with_ctrl_c({kSpoor, "record", "-o", path, "--", SPOOR_INTERRUPTS}, "ready");
  if (out == "no terminal") GTEST_SKIP() << "no pseudo-terminal here (/dev/ptmx)";
  EXPECT_NE(out.find("sigint 1\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("exited with code 0"), std::string::npos) << out;
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
  // Two images: ProcessStart with exec_count 0, then 1 after the exec.
  std::vector<uint64_t> exec_counts;
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e))
    if (e.descriptor->name == "ProcessStart") exec_counts.push_back(std::get<uint64_t>(*e.field("exec_count")));
  EXPECT_EQ(exec_counts, (std::vector<uint64_t>{0, 1}));
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
  EXPECT_NE(r.err.find("--no-preload --kernel=samples,switches,faults"), std::string::npos) << r.err;
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

TEST(Record, AStaticChildRunsAndIsNamedInTheSummary) {
  const Process r = run(kSpoor + " record -o " + trace_path("static-child") + " -- sh -c '" +
                        SPOOR_HEAP_COUNTS_STATIC + " 10 child; echo $?'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "child\n7\n");
  EXPECT_NE(r.err.find(std::string("not traced, but it ran: ") +
                       SPOOR_HEAP_COUNTS_STATIC + " (static binary)"),
            std::string::npos)
      << r.err;
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

TEST(Record, AProgramStartedWhereTheShimIsHiddenRunsAsUntraced) {
  // After chroot(), or in a mount namespace that hides the shim's path, the
  // loader cannot open the shim, and says so on the program's stderr. The
  // shim here is a copy (SPOOR_PRELOAD_LIB) in a directory a tmpfs then
  // covers, in a mount namespace of the test's own.
  if (geteuid() != 0 || run("unshare --mount true").status != 0) GTEST_SKIP() << "needs root for unshare --mount";
  const std::string dir = spoor::test::temp_path("hidden-shim");
  std::filesystem::create_directories(dir);
  const std::string shim = dir + "/libspoor-preload.so";
  std::filesystem::copy_file(SPOOR_SHIM, shim, std::filesystem::copy_options::overwrite_existing);
  const std::string cmd = "unshare --mount sh -c 'mount -t tmpfs spoor-hidden " + dir +
                          " && exec sh -c \"/bin/echo inside; /bin/echo again\"'";
  const Process alone = run(cmd);
  ASSERT_EQ(alone.status, 0) << alone.err;
  ASSERT_EQ(alone.out, "inside\nagain\n");
  const Process r = run("SPOOR_PRELOAD_LIB=" + shim + " " + kSpoor + " record -o " + trace_path("hidden-shim") +
                        " -- " + cmd);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, alone.out);
  EXPECT_EQ(r.err.find("ld.so"), std::string::npos) << "the programs' stderr is as untraced\n" << r.err;
  EXPECT_NE(r.err.find("not traced, but it ran: /usr/bin/sh (shim hidden by chroot/namespace)"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

TEST(Record, AProgramWhoseUserMayNotReadTheShimRunsAsUntraced) {
  // A program that drops root for nobody, with the shim in a directory
  // of mode 700 (a home directory): nobody's loader cannot open it.
  if (geteuid() != 0 || run("setpriv --reuid=nobody --regid=nogroup --clear-groups true").status != 0)
    GTEST_SKIP() << "needs root and setpriv";
  const std::string dir = spoor::test::temp_path("private-shim");
  std::filesystem::create_directories(dir);
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  const std::string shim = dir + "/libspoor-preload.so";
  std::filesystem::copy_file(SPOOR_SHIM, shim, std::filesystem::copy_options::overwrite_existing);
  const std::string cmd = "setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c 'echo as nobody'";
  const Process alone = run(cmd);
  ASSERT_EQ(alone.status, 0) << alone.err;
  const Process r = run("SPOOR_PRELOAD_LIB=" + shim + " " + kSpoor + " record -o " + trace_path("private-shim") +
                        " -- " + cmd);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, alone.out);
  EXPECT_EQ(r.err.find("ld.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(shim unreadable by its user)"), std::string::npos) << r.err;
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

TEST(Record, AnUntraceableProgramWhoseExecFailedIsNotNamedAsRun) {
  // A 32-bit program on a kernel without IA-32 emulation (as here, and as
  // ldd's probe of /lib/ld-linux.so.2 meets): the exec fails, so the
  // summary must not say it ran. Its ELF header alone, made executable.
  const std::string program = spoor::test::temp_path("i386-header");
  {
    unsigned char header[52] = {0x7f, 'E', 'L', 'F', 1 /* ELFCLASS32 */, 1, 1};
    header[16] = 2;   // ET_EXEC
    header[18] = 3;   // EM_386
    std::FILE* f = std::fopen(program.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(header, 1, sizeof header, f);
    std::fclose(f);
    ASSERT_EQ(chmod(program.c_str(), 0755), 0);
  }
  const Process alone = run("sh -c '" + program + " 2>/dev/null; echo $?'");
  if (alone.out == "0\n") GTEST_SKIP() << "this kernel runs 32-bit programs";
  const Process r = run(kSpoor + " record -o " + trace_path("failed-exec") + " -- sh -c '" + program +
                        " 2>/dev/null; echo $?'");
  EXPECT_EQ(r.out, alone.out) << r.err;
  EXPECT_EQ(r.err.find("not traced, but it ran: " + program), std::string::npos) << r.err;
  std::filesystem::remove(program);
}

// A program built with gcc's -fsanitize=address or =thread links the
// sanitizer's runtime as a shared library that must load before any other:
// with the shim preloaded ahead of it, ASan refuses to start ("ASan runtime
// does not come first") and TSan crashes in an interceptor not yet set up.
// spoor record starts such a program without the shim, directly or as a
// child, so it prints and exits as it does alone, and says why it is
// missing from the trace.
TEST(Record, SanitizerBuildsRunAsTheyDoAloneAndAreNamed) {
  const std::pair<const char*, const char*> builds[] = {{SPOOR_HEAP_COUNTS_ASAN, "AddressSanitizer build"},
                                                        {SPOOR_HEAP_COUNTS_TSAN, "ThreadSanitizer build"}};
  for (const auto& [program, why] : builds) {
    SCOPED_TRACE(program);
    const Process alone = run(std::string(program) + " 10 ran");
    ASSERT_EQ(alone.out, "ran\n") << alone.err;

    const Process direct = run(kSpoor + " record -o " + trace_path("sanitizer-direct") + " -- " + program + " 10 ran");
    EXPECT_EQ(direct.status, alone.status) << direct.err;
    EXPECT_EQ(direct.out, alone.out) << direct.err;
    EXPECT_NE(direct.err.find(std::string("never loaded libspoor-preload.so (") + why), std::string::npos)
        << direct.err;

    const Process child = run(kSpoor + " record -o " + trace_path("sanitizer-child") + " -- sh -c '" + program +
                              " 10 child; echo $?'");
    EXPECT_EQ(child.status, 0) << child.err;
    EXPECT_EQ(child.out, "child\n" + std::to_string(alone.status) + "\n") << child.err;
    EXPECT_NE(child.err.find(std::string("not traced, but it ran: ") + program + " (" + why + ")"),
              std::string::npos)
        << child.err;
    // The shell around it is traced as usual.
    EXPECT_NE(child.err.find("1 process,"), std::string::npos) << child.err;
  }
  std::filesystem::remove(trace_path("sanitizer-direct"));
  std::filesystem::remove(trace_path("sanitizer-child"));
}

// A sanitizer build's shim (cmake --preset asan) needs its runtime loaded
// before it, which an uninstrumented program never does: preloaded, it
// crashed every program. spoor record refuses it, names it, and runs
// nothing. (Any file that needs libasan stands for such a shim here.)
TEST(Record, ASanitizerBuildOfTheShimIsRefusedWithoutRunningTheProgram) {
  const std::string marker = trace_path("sanitizer-shim-ran");
  std::filesystem::remove(marker);
  const Process r = run(std::string("SPOOR_PRELOAD_LIB=") + SPOOR_HEAP_COUNTS_ASAN + " " + kSpoor + " record -o " +
                        trace_path("sanitizer-shim") + " -- touch " + marker);
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_NE(r.err.find(std::string(SPOOR_HEAP_COUNTS_ASAN) + " is a sanitizer build (AddressSanitizer build)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("cmake --preset release"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the program was not run";
  // A plain shim in the same variable records as usual.
  const Process plain = run(std::string("SPOOR_PRELOAD_LIB=") + SPOOR_SHIM + " " + kSpoor + " record -o " +
                            trace_path("sanitizer-shim") + " -- touch " + marker);
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_TRUE(std::filesystem::exists(marker));
  std::filesystem::remove(marker);
  std::filesystem::remove(trace_path("sanitizer-shim"));
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

// A program started in another network namespace (unshare -n, ip netns
// exec, a sandbox without network) does not see the recorder's abstract
// socket address: the shim then connects to the same socket as a file.
// Needs the right to make a network namespace (root, here).
TEST(Record, AProgramInAnotherNetworkNamespaceIsTraced) {
  if (run("unshare -n true").status != 0) GTEST_SKIP() << "cannot make a network namespace here";
  const Process r = run(kSpoor + " record -o " + trace_path("netns") + " -- unshare -n sh -c '" +
                        SPOOR_HEAP_COUNTS + " 10 inside; echo $?'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "inside\n7\n");
  // unshare, which becomes sh, and the program it starts.
  EXPECT_NE(r.err.find("2 processes,"), std::string::npos) << r.err;
  const Process report = run(kSpoor + " report " + trace_path("netns"));
  EXPECT_EQ(report.err.find("never reached the recorder"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("never reached the recorder"), std::string::npos) << report.out;
  std::filesystem::remove(trace_path("netns"));
}

// A program that puts a socket of its own on every descriptor, the number
// of the shim's connection to spoor record among them: the shim must not
// send its note about an untraceable program into the program's socket,
// nor close the program's descriptor in a fork child (where it drops the
// parent's connection). The program counts the bytes its socket got.
TEST(Record, AProgramThatReusesTheConnectionsNumberKeepsItsDescriptor) {
  const std::string program = std::string(SPOOR_FD_REUSE) + " " + SPOOR_HEAP_COUNTS_STATIC;
  const Process alone = run(program);
  ASSERT_EQ(alone.status, 0) << alone.err;
  ASSERT_EQ(alone.out, "spawned\n61 bytes\n");
  const Process traced = run(kSpoor + " record -o " + trace_path("fd-reuse") + " -- " + program);
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, alone.out) << traced.err;
  EXPECT_NE(traced.err.find("2 processes,"), std::string::npos) << "the fork child is traced: " << traced.err;
  std::filesystem::remove(trace_path("fd-reuse"));
}

// The shim's own descriptors (its connection to spoor record, libunwind's
// pipe) sit at the top of the program's range: the program's first open()
// and pipe() get the numbers they get alone (they got 6, 7 and 8).
TEST(Record, TheProgramsFirstDescriptorsAreTheOnesItGetsAlone) {
  const Process alone = run(std::string(SPOOR_FIRST_DESCRIPTORS) + " 3>&- 4>&- 5>&-");
  ASSERT_EQ(alone.status, 0) << alone.err;
  ASSERT_EQ(alone.out, "open 3, pipe 4 5\n");
  const Process traced = run(kSpoor + " record -o " + trace_path("first-fds") + " -- " + SPOOR_FIRST_DESCRIPTORS +
                             " 3>&- 4>&- 5>&-");
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, alone.out) << traced.err;
  std::filesystem::remove(trace_path("first-fds"));
  // Under a low limit too (ulimit -n 64: a sandbox, a test of running out).
  const Process low = run("sh -c 'ulimit -n 64 && exec " + kSpoor + " record -o " + trace_path("first-fds") +
                          " -- " + SPOOR_FIRST_DESCRIPTORS + " 3>&- 4>&- 5>&-'");
  EXPECT_EQ(low.status, 0) << low.err;
  EXPECT_EQ(low.out, alone.out) << low.err;
  std::filesystem::remove(trace_path("first-fds"));
}

// Listed, the program's descriptor table reads as it does untraced: the
// shim's connection is left out of the entries of /proc/self/fd and its
// other names (ls through opendir, find through fdopendir, Python's
// os.listdir, a shell's glob; and a program listing it by a relative
// name, with readdir_r, scandir, scandirat, and getdents64 through its
// wrapper and syscall(), 64 bytes a read), as it is out of the program's
// first numbers above. It and libunwind's pipe (which the shim no longer
// keeps open) listed as 960-962 before.
TEST(Record, TheProgramsListingOfItsDescriptorsLeavesTheShimsOut) {
  const std::vector<std::string> listings = {
      "ls /proc/self/fd /dev/fd/ /proc/self/fdinfo",
      "find /proc/self/fd",
      "python3 -c 'import os; print(sorted(os.listdir(\"/proc/self/fd\")), sorted(os.listdir(\"/proc/%d/fd\" % os.getpid())))'",
      "bash -c 'echo /proc/self/fd/*'",
      SPOOR_FD_LISTINGS,
  };
  for (const std::string& listing : listings) {
    const Process alone = run(listing);
    ASSERT_EQ(alone.status, 0) << listing << ": " << alone.err;
    const Process traced = run(kSpoor + " record -o " + trace_path("fd-listing") + " -- " + listing);
    EXPECT_EQ(traced.status, 0) << listing << ": " << traced.err;
    EXPECT_EQ(traced.out, alone.out) << listing << ": " << traced.err;
  }
  std::filesystem::remove(trace_path("fd-listing"));
}

// libunwind keeps the numbers of the pipe it checks addresses with. A
// program that closed every descriptor and then put files of its own on
// those numbers (dup2) had bytes of them read by libunwind's next walk, a
// byte of memory written into them, or the file closed under it. The shim
// now closes that pipe at once and answers libunwind's calls on its
// numbers itself (unwind_pipe.h). Without the rule cache the first walks
// of each call site are libunwind's.
TEST(Record, LibunwindNeverTouchesTheProgramsFilesOnTheShimsFormerNumbers) {
  const std::string files = spoor::test::temp_path("shim-numbers");
  const std::string program = std::string(SPOOR_SHIM_NUMBERS_REUSED) + " " + files;
  const Process alone = run(program);
  ASSERT_EQ(alone.status, 0) << alone.err;
  EXPECT_EQ(alone.out, "files in place\nunchanged\n");
  for (int i = 0; i < 3; ++i) {
    const Process traced =
        run("SPOOR_RULE_CACHE=off " + kSpoor + " record -o " + trace_path("shim-numbers") + " -- " + program);
    EXPECT_EQ(traced.status, 0) << traced.err;
    EXPECT_EQ(traced.out, alone.out) << traced.err;
  }
  std::filesystem::remove(trace_path("shim-numbers"));
}

// A process in a pid namespace of its own sees other pids than the
// recorder (getpid() is 1 for the first). Its PROCESS and metadata blocks
// named that pid while the recorder put its streams under the real one:
// every event of it was unreadable ("event key 10 has no EVENT block for
// pid ..."). The shim now writes the pid and parent the recorder sees.
// Needs the right to make a pid namespace (root, here).
TEST(Record, AProcessInAnotherPidNamespaceIsNamedAsTheRecorderSeesIt) {
  if (run("unshare --pid --fork true").status != 0) GTEST_SKIP() << "cannot make a pid namespace here";
  const std::string path = trace_path("pidns");
  const Process r = run(kSpoor + " record -o " + path + " -- unshare --pid --fork sh -c '" + SPOOR_HEAP_COUNTS +
                        " 10 inside; echo $?'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "inside\n7\n");
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage()) << trace->damage()->message;
  const std::vector<const reader::Process*> processes = traced_processes(*trace);
  ASSERT_EQ(processes.size(), 3u) << "unshare, its child (which becomes sh), and the program";
  std::set<uint32_t> pids;
  for (const reader::Process* p : processes) pids.insert(p->pid);
  size_t parents_in_tree = 0;
  for (const reader::Process* p : processes) {
    EXPECT_GT(p->pid, 2u) << "the recorder's number, not the namespace's";
    parents_in_tree += pids.count(p->ppid);
  }
  EXPECT_EQ(parents_in_tree, 2u) << "unshare's child and the program have their parents' real pids";
  reader::EventReader events(trace.value());
  reader::Event e;
  uint64_t allocs = 0;
  while (events.next(e)) {
    allocs += e.descriptor->name == "Alloc";
    // A child named by its number inside the namespace would be a process
    // the trace does not have ("2", exit 0).
    const char* named = e.descriptor->name == "ProcessExit" ? "pid" : e.descriptor->name == "Fork" ? "child_pid" : nullptr;
    if (named != nullptr && e.pid != processes.front()->ppid) {
      EXPECT_TRUE(pids.count(static_cast<uint32_t>(std::get<uint64_t>(*e.field(named)))))
          << e.descriptor->name << " by pid " << e.pid << " names a process not in the trace";
    }
  }
  EXPECT_TRUE(events.damages().empty()) << events.damages().front().message;
  EXPECT_GE(allocs, 10u) << "the program's allocations are readable";
  std::filesystem::remove(path);
}

// A setuid program run by another user ignores LD_PRELOAD (the loader's
// secure mode): it runs, as the program or as a child, and the summary
// says it was not traced. Needs root, to make a root-owned setuid copy
// and to run spoor as nobody.
TEST(Record, ASetuidProgramRunsAndIsReportedUntraceable) {
  if (geteuid() != 0 || !spoor::test::have_program("setpriv")) GTEST_SKIP() << "needs root and setpriv";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("spoor-setuid-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all | fs::perms::sticky_bit);
  const fs::path program = dir / "setuid_counts";
  fs::copy_file(SPOOR_HEAP_COUNTS, program, fs::copy_options::overwrite_existing);
  ASSERT_EQ(chmod(program.c_str(), 04755), 0);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups " + kSpoor + " record -o ";

  const Process direct = run(as_nobody + (dir / "direct.spoor").string() + " -- " + program.string() + " 10 ran");
  EXPECT_EQ(direct.status, 7) << "it ran, with its own exit status: " << direct.err;
  EXPECT_EQ(direct.out, "ran\n");
  EXPECT_NE(direct.err.find("never loaded libspoor-preload.so (a static or setuid program"), std::string::npos)
      << direct.err;

  const Process child =
      run(as_nobody + (dir / "child.spoor").string() + " -- sh -c '" + program.string() + " 10 child; echo $?'");
  EXPECT_EQ(child.status, 0) << child.err;
  EXPECT_EQ(child.out, "child\n7\n");
  EXPECT_NE(child.err.find("not traced, but it ran: " + program.string() +
                           " (setuid program)"),
            std::string::npos)
      << child.err;
  fs::remove_all(dir);
}

TEST(Record, UsageErrors) {
  EXPECT_EQ(run(kSpoor + " record").status, 2);
  EXPECT_EQ(run(kSpoor + " record --bogus -- true").status, 2);
  const Process bad_spec = run(kSpoor + " record -p 'Spoor.Heap:0x1:loud' -- true");
  EXPECT_EQ(bad_spec.status, 2);
  EXPECT_NE(bad_spec.err.find("loud"), std::string::npos) << bad_spec.err;
  // A name no provider of the shim has would record nothing at all.
  const Process unknown = run(kSpoor + " record -p hep -- true");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no provider 'hep'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("heap (Spoor.Heap)"), std::string::npos) << "it lists the names it takes";
}

}  // namespace
