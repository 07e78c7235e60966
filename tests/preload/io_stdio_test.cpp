// The stdio layer's line, format and character calls end to end:
// programs/io_stdio.c, built as written (-O0) and fortified (-O2
// _FORTIFY_SOURCE=2), runs under spoor record; the trace must count every
// call and byte of each function, putc/getc's coalesced runs must add up
// to exactly the characters moved, and the program's output must not
// change.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "event_fields.h"
#include "io_report_rows.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;
namespace fs = std::filesystem;
using spoor::test::Process;
using spoor::test::run;
using spoor::test::temp_path;

const std::string kSpoor = SPOOR_TOOL;
constexpr int64_t kChars = 100000, kEvery = 1000, kInput = 777;

using namespace spoor::test::fields;  // i64, u64, ptr, str, blob

// One FPutcRun or FGetcRun.
struct CharRun {
  uint64_t calls = 0;
  int64_t result = 0;
  bool operator==(const CharRun&) const = default;
};

// What went through one file, stdin or stdout (or one phase of stdout).
struct Traffic {
  // Calls of FWrite and FRead events and of FWriteRun and FReadRun runs,
  // and the bytes they moved.
  int fwrites = 0, freads = 0;
  int64_t written = 0, read = 0;
  int fwrite_events = 0, write_runs = 0;  // FWrite events, FWriteRun events
  std::vector<CharRun> put_runs, get_runs;
  int64_t put_bytes() const {
    int64_t n = 0;
    for (const CharRun& r : put_runs) n += r.result;
    return n;
  }
};

struct StdioReplay : spoor::test::fields::CallSites {
  std::map<std::string, Traffic> files;  // by base name; "stdin"
  std::vector<Traffic> stdout_phases;    // split at each fflush(stdout)
  int unattributed = 0;
  int untimed = 0;  // runs whose end is before their start, or after their record
  std::vector<uint64_t> run_stacks;                   // every run's stack ID
};

StdioReplay replay(const std::string& path) {
  StdioReplay r;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return r;
  std::map<uint64_t, std::string> streams;
  std::map<int64_t, std::string> fds;
  r.stdout_phases.resize(1);
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    const std::string& name = e.descriptor->name;
    r.note(e);  // stacks and modules
    if (e.provider->name != "Spoor.IO") continue;
    if (name == "Open") {
      if (i64(e, "fd") >= 0) fds[i64(e, "fd")] = base_name(std::get<std::string_view>(*e.field("path")));
      continue;
    }
    if (name == "FOpen") {
      if (ptr(e, "stream") != 0) streams[ptr(e, "stream")] = base_name(std::get<std::string_view>(*e.field("path")));
      continue;
    }
    if (name == "FClose") {
      streams.erase(ptr(e, "stream"));
      continue;
    }
    const bool data = name == "FWrite" || name == "FRead" || name == "FPutcRun" || name == "FGetcRun" ||
                      name == "FWriteRun" || name == "FReadRun";
    if (name == "FFlush" && i64(e, "fd") == 1) r.stdout_phases.emplace_back();
    if (!data) continue;
    Traffic* t = nullptr;
    const int64_t fd = i64(e, "fd");
    if (fd == 1) {
      t = &r.stdout_phases.back();
    } else if (fd == 0) {
      t = &r.files["stdin"];
    } else if (auto s = streams.find(ptr(e, "stream")); s != streams.end()) {
      t = &r.files[s->second];
    } else if (auto f = fds.find(fd); ptr(e, "stream") == 0 && f != fds.end()) {
      t = &r.files[f->second];  // dprintf: a descriptor
    } else {
      ++r.unattributed;
      continue;
    }
    const int64_t result = i64(e, "result");
    if (name == "FWrite") {
      ++t->fwrites;
      ++t->fwrite_events;
      t->written += std::max<int64_t>(result, 0);
    } else if (name == "FRead") {
      ++t->freads;
      t->read += std::max<int64_t>(result, 0);
    } else if (name == "FWriteRun") {
      t->fwrites += static_cast<int>(u64(e, "calls"));
      ++t->write_runs;
      t->written += result;
    } else if (name == "FReadRun") {
      t->freads += static_cast<int>(u64(e, "calls"));
      t->read += result;
    } else {
      const uint64_t start = u64(e, "start_ticks"), end = u64(e, "end_ticks");
      if (start == 0 || end < start || end > e.ticks) ++r.untimed;
      r.run_stacks.push_back(u64(e, "stack"));
      (name == "FPutcRun" ? t->put_runs : t->get_runs).push_back(CharRun{u64(e, "calls"), result});
    }
  }
  return r;
}

class IoStdio : public ::testing::TestWithParam<bool> {  // fortified?
 protected:
  void SetUp() override {
    dir_ = temp_path("stdio-" + std::to_string(GetParam()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    input_ = dir_ + "/input.txt";
    std::ofstream(input_) << std::string(kInput - 1, 'i') << '\n';
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string program() const { return GetParam() ? SPOOR_IO_STDIO_FORTIFY : SPOOR_IO_STDIO; }
  std::string command() const { return program() + " " + dir_ + " < " + input_; }
  int64_t size(const char* name) const { return static_cast<int64_t>(fs::file_size(dir_ + "/" + name)); }

  // Runs the program under spoor record; the trace stays for the test.
  Process record(const std::string& trace) {
    return run(kSpoor + " record -o " + trace + " -- " + command());
  }

  std::string dir_, input_;
};

TEST_P(IoStdio, TheProgramCallsTheFunctionsUnderTest) {
  std::vector<std::string> expected = {"fputc", "putc", "_IO_putc", "fgetc", "getc", "_IO_getc", "puts", "getdelim"};
  if (GetParam()) {
    for (const char* fn : {"__printf_chk", "__vfprintf_chk", "__dprintf_chk", "__vdprintf_chk", "__getdelim"})
      expected.emplace_back(fn);
  } else {
    for (const char* fn : {"printf", "vprintf", "dprintf", "vdprintf", "getline", "putchar", "putchar_unlocked",
                           "putc_unlocked", "fputc_unlocked", "getc_unlocked", "fgetc_unlocked", "getchar",
                           "getchar_unlocked"})
      expected.emplace_back(fn);
  }
  EXPECT_EQ(spoor::test::missing_imports(program(), expected), std::vector<std::string>{});
}

TEST_P(IoStdio, EveryCallAndByteIsCountedPerFunction) {
  const std::string trace = dir_ + ".spoor";
  const Process traced = record(trace);
  ASSERT_EQ(traced.status, 0) << traced.err;
  const StdioReplay r = replay(trace);
  fs::remove(trace);
  EXPECT_EQ(r.unattributed, 0);
  EXPECT_EQ(r.untimed, 0) << "a run starts before its first call and ends before it is written";
  const bool fortified = GetParam();

  // The putc loop: putc's calls are one run, though fputc calls from two
  // other sites (one on the same stream) come between them; together
  // exactly the file.
  const Traffic& chars = r.files.at("chars.txt");
  ASSERT_EQ(size("chars.txt"), kChars + kChars / kEvery);
  EXPECT_EQ(chars.put_runs, std::vector<CharRun>({{kChars, kChars}, {kChars / kEvery, kChars / kEvery}}))
      << "putc's run, then fputc's on the same stream";
  EXPECT_EQ(chars.put_bytes(), size("chars.txt"));
  EXPECT_EQ(chars.fwrites, 0) << "no character call is also an FWrite";
  const Traffic& marks = r.files.at("marks.txt");
  EXPECT_EQ(marks.put_runs, std::vector<CharRun>({{kChars / kEvery, kChars / kEvery}})) << "fputc on another stream";
  EXPECT_EQ(r.files.at("io_putc.txt").put_runs, std::vector<CharRun>({{300, 300}})) << "_IO_putc";
  if (!fortified) {
    EXPECT_EQ(r.files.at("unlocked.txt").put_runs, std::vector<CharRun>({{200, 200}, {100, 100}}))
        << "putc_unlocked, fputc_unlocked";
  }

  // stdout, phase by phase (each ends with fflush(stdout)).
  ASSERT_EQ(r.stdout_phases.size(), 6u);
  EXPECT_EQ(r.stdout_phases[0].fwrites, 11) << (fortified ? "__printf_chk, and puts" : "printf");
  EXPECT_LT(r.stdout_phases[0].fwrite_events, 11) << "the loop's printf calls are a run";
  EXPECT_EQ(r.stdout_phases[0].written, 10 * 11 + 6);
  EXPECT_EQ(r.stdout_phases[1].fwrites, 10) << (fortified ? "__vfprintf_chk" : "vprintf");
  EXPECT_EQ(r.stdout_phases[1].written, 10 * 12);
  EXPECT_EQ(r.stdout_phases[2].fwrites, 10) << "puts";
  EXPECT_EQ(r.stdout_phases[2].written, 10 * 10) << "puts counts its newline";
  EXPECT_EQ(r.stdout_phases[3].put_runs, std::vector<CharRun>({{1000, 1000}})) << (fortified ? "putc" : "putchar");
  EXPECT_EQ(r.stdout_phases[3].fwrites, 0);
  if (!fortified) {
    EXPECT_EQ(r.stdout_phases[4].put_runs, std::vector<CharRun>({{500, 500}})) << "putchar_unlocked";
  }

  // printf to a descriptor: one FWrite per call, never a run.
  EXPECT_EQ(r.files.at("dprintf.txt").fwrite_events, 10);
  EXPECT_EQ(r.files.at("vdprintf.txt").fwrite_events, 10);
  EXPECT_EQ(r.files.at("dprintf.txt").write_runs, 0);
  EXPECT_EQ(r.files.at("dprintf.txt").fwrites, 10);
  EXPECT_EQ(r.files.at("dprintf.txt").written, size("dprintf.txt"));
  EXPECT_EQ(r.files.at("vdprintf.txt").fwrites, 10);
  EXPECT_EQ(r.files.at("vdprintf.txt").written, size("vdprintf.txt"));

  // getc to the end of a file: one run, its last call the EOF; twice (the
  // second time in the copy loop, which writes the copy as one run).
  const CharRun whole{static_cast<uint64_t>(size("chars.txt")) + 1, size("chars.txt")};
  EXPECT_EQ(chars.get_runs, std::vector<CharRun>({whole, whole}));
  ASSERT_EQ(size("copy.txt"), size("chars.txt"));
  EXPECT_EQ(r.files.at("copy.txt").put_runs, std::vector<CharRun>({{whole.calls - 1, whole.result}}));
  // The peeks: ungetc gives each character back to the peeking site's run.
  ASSERT_EQ(size("peek.txt"), 64);
  EXPECT_EQ(r.files.at("peek.txt").get_runs, std::vector<CharRun>({{65, 0}, {64, 64}}))
      << "peeking getc (given back), then the reading one";
  EXPECT_EQ(marks.get_runs, std::vector<CharRun>({{101, 100}})) << "fgetc";
  EXPECT_EQ(r.files.at("io_putc.txt").get_runs, std::vector<CharRun>({{301, 300}})) << "_IO_getc";
  if (!fortified) {
    EXPECT_EQ(r.files.at("unlocked.txt").get_runs, std::vector<CharRun>({{150, 150}, {100, 100}, {51, 50}}))
        << "getc_unlocked, fgetc_unlocked, getc: one run per call site";
    EXPECT_EQ(r.files.at("stdin").get_runs, std::vector<CharRun>({{100, 100}, {kInput - 100 + 1, kInput - 100}}))
        << "getchar_unlocked, getchar";
  } else {
    EXPECT_EQ(r.files.at("stdin").get_runs, std::vector<CharRun>({{kInput + 1, kInput}})) << "getchar as getc(stdin)";
  }

  // getline and getdelim: a call per line (in runs), and one FRead for
  // the end of the file.
  const Traffic& lines = r.files.at("lines.txt");
  EXPECT_EQ(lines.fwrites, 40) << "fprintf";
  EXPECT_EQ(lines.read, 2 * size("lines.txt")) << "getline, then getdelim, each the whole file";
  EXPECT_NE(traced.out.find("getline 41 getdelim "), std::string::npos) << traced.out;
  const size_t at = traced.out.find("getdelim ") + 9;
  EXPECT_EQ(lines.freads, 41 + std::stoi(traced.out.substr(at)));
  // The failed fputc: a run of its own, with its errno.
  EXPECT_EQ(lines.put_runs, std::vector<CharRun>({{1, -EBADF}}));
}

TEST_P(IoStdio, EachRunCarriesTheStackOfTheProgramsCall) {
  const std::string trace = dir_ + ".spoor";
  ASSERT_EQ(record(trace).status, 0);
  const StdioReplay r = replay(trace);
  fs::remove(trace);
  const auto exe = r.modules.find(fs::canonical(program()).string());
  ASSERT_NE(exe, r.modules.end());
  ASSERT_FALSE(r.run_stacks.empty());
  // The default spec asks for read and write stacks; the shim's frames are
  // skipped, so the innermost frame is the program's call.
  for (uint64_t stack : r.run_stacks) {
    const auto frame = r.innermost_frame.find(stack);
    ASSERT_NE(frame, r.innermost_frame.end()) << "stack " << stack;
    EXPECT_TRUE(frame->second >= exe->second.first && frame->second < exe->second.second) << "stack " << stack;
  }
}

TEST_P(IoStdio, OutputIsByteIdenticalTracedAndUntraced) {
  const Process plain = run(command());
  ASSERT_EQ(plain.status, 0) << plain.err;
  const std::string trace = dir_ + ".spoor";
  const Process traced = record(trace);
  fs::remove(trace);
  ASSERT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out.size(), plain.out.size());
  EXPECT_TRUE(traced.out == plain.out);
  EXPECT_NE(plain.out.find("fputc on a read-only stream: EOF, errno EBADF"), std::string::npos) << plain.out;
}

TEST_P(IoStdio, TheReportCountsStdioBytesAndCallsPerFile) {
  const std::string trace = dir_ + ".spoor";
  ASSERT_EQ(record(trace).status, 0);
  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, true);
  fs::remove(trace);
  ASSERT_EQ(rows.failure, "");
  auto& files = rows.files;
  ASSERT_TRUE(files.count("chars.txt"));
  const int64_t chars = size("chars.txt");
  EXPECT_EQ(files["chars.txt"]["bytes_written"], chars);
  EXPECT_EQ(files["chars.txt"]["writes"], chars) << "a run counts as its calls";
  EXPECT_EQ(files["chars.txt"]["bytes_read"], 2 * chars) << "read twice";
  EXPECT_EQ(files["chars.txt"]["reads"], 2 * (chars + 1)) << "getc's calls, the EOF included";
  EXPECT_EQ(files["peek.txt"]["bytes_read"], 64) << "ungetc gave back what the peeks read";
  EXPECT_EQ(files["dprintf.txt"]["bytes_written"], size("dprintf.txt"));
  EXPECT_EQ(files["lines.txt"]["bytes_read"], 2 * size("lines.txt"));
  EXPECT_EQ(files["lines.txt"]["errors"], 1) << "the failed fputc";
  ASSERT_TRUE(files.count("input.txt")) << "stdin is named by its file\n" << rows.report.dump();
  EXPECT_EQ(files["input.txt"]["bytes_read"], kInput);
}

// getc_unlocked inlined into the program reaches libc only through
// __uflow, once per buffer refill: those refills are the file's reads, and
// their bytes the whole file, once (the ungetc peek midway rereads a byte
// from the backup area, not the file).
TEST(InlinedGetc, TheBufferRefillsAreTheFilesReads) {
  ASSERT_NE(run("nm -D " SPOOR_INLINE_GETC).out.find(" U __uflow"), std::string::npos)
      << "getc_unlocked was not inlined: the test would not reach __uflow";
  const std::string input = temp_path("inline-getc.txt");
  constexpr int64_t kBytes = 300000;
  std::ofstream(input) << std::string(kBytes, 'x');
  const Process plain = run(std::string(SPOOR_INLINE_GETC) + " " + input);
  ASSERT_EQ(plain.out, std::to_string(kBytes) + "\n");
  const std::string trace = temp_path("inline-getc.spoor");
  const Process traced = run(kSpoor + " record -p io -o " + trace + " -- " + SPOOR_INLINE_GETC + " " + input);
  ASSERT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, true);
  fs::remove(trace);
  fs::remove(input);
  ASSERT_EQ(rows.failure, "");
  ASSERT_TRUE(rows.files.count("inline-getc.txt")) << rows.report.dump().substr(0, 3000);
  const auto& file = rows.files["inline-getc.txt"];
  EXPECT_EQ(file["bytes_read"], kBytes);
  // 4 KiB buffers (the file system's block size), then the end: a few
  // dozen reads, not one per byte and not none.
  EXPECT_GE(file["reads"].get<int64_t>(), 2);
  EXPECT_LE(file["reads"].get<int64_t>(), kBytes / 1024 + 1);
}

TEST(MemoryStreams, EachIsARowOfItsOwnNamedByItsFunction) {
  // memory_streams.c: open_memstream, open_wmemstream, fmemopen and
  // fopencookie streams, whose calls carry no descriptor (fd -1). Each
  // function's streams are one row, with the bytes the program counted;
  // none is left as "(no descriptor: fd -1)".
  const Process plain = run(SPOOR_MEMORY_STREAMS);
  ASSERT_EQ(plain.status, 0) << plain.out;
  unsigned long long memstream = 0, wide = 0, fmemopen = 0, cookie = 0;
  ASSERT_EQ(std::sscanf(plain.out.c_str(), "memstream %llu wmemstream %llu fmemopen %llu cookie %llu", &memstream,
                        &wide, &fmemopen, &cookie),
            4)
      << plain.out;
  const std::string trace = temp_path("memory-streams.spoor");
  const Process traced = run(kSpoor + " record -o " + trace + " -- " + SPOOR_MEMORY_STREAMS);
  ASSERT_EQ(traced.status, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, false);
  fs::remove(trace);
  ASSERT_EQ(rows.failure, "");
  auto& files = rows.files;
  EXPECT_FALSE(files.count("(no descriptor: fd -1)"));
  ASSERT_TRUE(files.count("(memory stream: open_memstream)"));
  EXPECT_EQ(files["(memory stream: open_memstream)"]["opens"], 1);
  EXPECT_EQ(files["(memory stream: open_memstream)"]["writes"], 1000);
  EXPECT_EQ(files["(memory stream: open_memstream)"]["bytes_written"], memstream);
  ASSERT_TRUE(files.count("(memory stream: open_wmemstream)"));
  EXPECT_EQ(files["(memory stream: open_wmemstream)"]["opens"], 1);
  ASSERT_TRUE(files.count("(memory stream: fmemopen)"));
  EXPECT_EQ(files["(memory stream: fmemopen)"]["bytes_read"], fmemopen);
  EXPECT_EQ(files["(memory stream: fmemopen)"]["reads"], 4) << "three lines, then the end";
  ASSERT_TRUE(files.count("(cookie stream: fopencookie)"));
  EXPECT_EQ(files["(cookie stream: fopencookie)"]["bytes_written"], cookie);
  EXPECT_EQ(files["(cookie stream: fopencookie)"]["writes"], 100);
}

INSTANTIATE_TEST_SUITE_P(AsWrittenAndFortified, IoStdio, ::testing::Bool(),
                         [](const auto& param_info) { return param_info.param ? "Fortified" : "AsWritten"; });

}  // namespace
