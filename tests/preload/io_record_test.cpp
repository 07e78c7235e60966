// Spoor.IO end to end: programs whose file traffic is known (programs/
// io_files.c, io_fortify.c) run under spoor record; the trace, replayed the
// way a consumer would (fds followed through Open, Dup and Close, streams
// through FOpen and FDOpen), must account for every byte in the files.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "event_fields.h"
#include "run_command.h"
#include "spoor/format.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;
namespace fs = std::filesystem;
using spoor::test::Process;
using spoor::test::run;
using spoor::test::temp_path;

const std::string kSpoor = SPOOR_TOOL;

struct Open {
  std::string path;  // as passed
  int64_t dirfd = 0;
  int64_t fd = 0;    // or -errno
  uint64_t stack = 0;
};

struct FOpen {
  std::string path;
  int64_t fd = 0;       // or -errno
  uint64_t stream = 0;  // null when it failed
};

// One Read, Write or Seek as recorded: its fields by name.
struct Call {
  std::string name, file;
  int64_t offset = 0, result = 0;
  uint64_t vectors = 0, requested = 0;
  int64_t whence = 0;
  bool operator==(const Call&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Call& c) {
  return os << c.name << "(" << c.file << ", offset " << c.offset << ", vectors " << c.vectors << ", requested "
            << c.requested << ", whence " << c.whence << ") = " << c.result;
}

// The trace replayed: files are named by their base name (every test file
// has its own).
struct IoReplay : spoor::test::fields::CallSites {
  std::map<std::string, int> events;               // by event name
  std::vector<Open> opens;                         // Open events
  std::vector<FOpen> fopens;                       // FOpen events
  std::map<std::string, int64_t> fd_written, fd_read;        // fd layer
  std::map<std::string, int64_t> stdio_written, stdio_read;  // stdio layer
  std::set<std::pair<int64_t, std::string>> write_fds;       // (fd, file) of each Write
  std::map<std::string, std::vector<uint64_t>> read_stacks;   // Read events' stacks, by file
  std::vector<Call> calls;  // Read, Write and Seek on the test's files, in order
  std::vector<std::pair<bool, int64_t>> syncs;  // Sync events: data_only, result
  int untimed = 0;  // IO events whose start_ticks is not before their timestamp
  int unattributed = 0;  // data events on an fd or stream the replay does not know
};

using namespace spoor::test::fields;  // i64, u64, ptr, str, blob

IoReplay replay(const std::string& path) {
  IoReplay r;
  auto trace = reader::Trace::open(path);
  EXPECT_TRUE(trace) << trace.error();
  if (!trace) return r;
  EXPECT_FALSE(trace->damage());
  std::map<int64_t, std::string> fds;       // live descriptor -> file
  std::map<uint64_t, std::string> streams;  // live FILE* -> file
  auto file_of_fd = [&](int64_t fd) -> const std::string* {
    auto it = fds.find(fd);
    if (it == fds.end()) {
      ++r.unattributed;
      return nullptr;
    }
    return &it->second;
  };
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) {
    const std::string& name = e.descriptor->name;
    r.note(e);  // stacks and modules
    if (e.provider->name != "Spoor.IO") continue;
    ++r.events[name];
    if (name == "FdInherited" || name == "Socket") continue;  // descriptions, not calls: no start_ticks
    if (u64(e, "start_ticks") == 0 || u64(e, "start_ticks") > e.ticks) ++r.untimed;
    if (name == "Open") {
      Open o{str(e, "path"), i64(e, "dirfd"), i64(e, "fd"), u64(e, "stack")};
      if (o.fd >= 0) fds[o.fd] = base_name(o.path);
      r.opens.push_back(o);
    } else if (name == "Dup") {
      if (i64(e, "result") >= 0 && fds.count(i64(e, "fd"))) fds[i64(e, "result")] = fds[i64(e, "fd")];
    } else if (name == "Close") {
      fds.erase(i64(e, "fd"));
    } else if (name == "Seek") {
      if (const auto it = fds.find(i64(e, "fd")); it != fds.end())
        r.calls.push_back(Call{name, it->second, i64(e, "offset"), i64(e, "result"), 0, 0, i64(e, "whence")});
    } else if (name == "Sync") {
      r.syncs.emplace_back(std::get<bool>(*e.field("data_only")), i64(e, "result"));
    } else if (name == "Read" || name == "Write") {
      const int64_t fd = i64(e, "fd");
      if (fd <= 2) continue;  // the terminal or pipe the program was given
      const std::string* file = file_of_fd(fd);
      if (file == nullptr) continue;
      const int64_t bytes = std::max<int64_t>(i64(e, "result"), 0);
      r.calls.push_back(Call{name, *file, i64(e, "offset"), i64(e, "result"), u64(e, "vectors"), u64(e, "requested")});
      if (name == "Read") {
        r.fd_read[*file] += bytes;
        r.read_stacks[*file].push_back(u64(e, "stack"));
      } else {
        r.fd_written[*file] += bytes;
        r.write_fds.insert({fd, *file});
      }
    } else if (name == "FOpen") {
      const uint64_t stream = ptr(e, "stream");
      r.fopens.push_back(FOpen{str(e, "path"), i64(e, "fd"), stream});
      if (stream != 0) {
        streams[stream] = base_name(str(e, "path"));
        fds[i64(e, "fd")] = streams[stream];  // opened inside libc: no Open event
      }
    } else if (name == "FDOpen") {
      const std::string* file = file_of_fd(i64(e, "fd"));
      if (ptr(e, "stream") != 0 && file != nullptr) streams[ptr(e, "stream")] = *file;
    } else if (name == "FClose") {
      streams.erase(ptr(e, "stream"));
      fds.erase(i64(e, "fd"));
    } else if (name == "FRead" || name == "FWrite" || name == "FReadRun" || name == "FWriteRun") {
      auto it = streams.find(ptr(e, "stream"));
      if (it == streams.end()) {
        if (i64(e, "fd") > 2) ++r.unattributed;
        continue;
      }
      const int64_t bytes = std::max<int64_t>(i64(e, "result"), 0);
      (name == "FRead" || name == "FReadRun" ? r.stdio_read : r.stdio_written)[it->second] += bytes;
    }
  }
  return r;
}

class IoFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_path("io-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs io_files under spoor record with the given enable spec ("" for
  // the default: everything) and replays its trace.
  IoReplay record(const std::string& spec = "") {
    const std::string trace = record_trace(spec);
    IoReplay r = replay(trace);
    fs::remove(trace);
    return r;
  }
  // The same run, its trace left in place: its path.
  std::string record_trace(const std::string& spec = "") {
    const std::string trace = dir_ + ".spoor";
    const std::string providers = spec.empty() ? "" : " -p '" + spec + "'";
    recorded_ = run(kSpoor + " record -o " + trace + providers + " -- " + SPOOR_IO_FILES + " " + dir_);
    EXPECT_EQ(recorded_.status, 0) << recorded_.err;
    return trace;
  }
  int64_t size(const char* name) const { return static_cast<int64_t>(fs::file_size(dir_ + "/" + name)); }

  std::string dir_;
  Process recorded_;
};

TEST_F(IoFiles, BytesWrittenAndReadPerFileAreTheFilesSizes) {
  const IoReplay r = record();
  EXPECT_EQ(r.unattributed, 0) << "every read and write is on a descriptor opened in the trace";
  ASSERT_EQ(size("a.bin"), 2100);
  EXPECT_EQ(r.fd_written.at("a.bin"), 2100) << "write + pwrite + writev";
  EXPECT_EQ(r.fd_read.at("a.bin"), 2100) << "read + pread";
  ASSERT_EQ(size("b.bin"), 765);
  EXPECT_EQ(r.fd_written.at("b.bin"), 765) << "only through dup'ed descriptors";
  EXPECT_EQ(r.fd_read.at("b.bin"), 765) << "readv";
  ASSERT_EQ(size("v.bin"), 500);
  EXPECT_EQ(r.fd_written.at("v.bin"), 500) << "pwritev";
  EXPECT_EQ(r.fd_read.at("v.bin"), 500) << "preadv";
  EXPECT_EQ(r.events.at("Sync"), 2);
}

// Each call's own fields, as io_files.c made them: the offset (-1 at the
// file position), the iovec count, the bytes asked for, lseek's whence,
// fsync against fdatasync.
TEST_F(IoFiles, EachCallCarriesItsOffsetVectorsAndRequest) {
  const IoReplay r = record();
  std::vector<Call> on_a, on_v;
  for (const Call& c : r.calls) {
    if (c.file == "a.bin") on_a.push_back(c);
    if (c.file == "v.bin") on_v.push_back(c);
  }
  const std::vector<Call> expected_a = {
      {"Write", "a.bin", -1, 1000, 0, 1000},   {"Write", "a.bin", 1000, 500, 0, 500},
      {"Seek", "a.bin", 1500, 1500, 0, 0, SEEK_SET}, {"Write", "a.bin", -1, 600, 3, 600},
      {"Read", "a.bin", -1, 700, 0, 700},      {"Read", "a.bin", 700, 1400, 0, 4096},
      {"Seek", "a.bin", 0, 2100, 0, 0, SEEK_END}};
  EXPECT_EQ(on_a, expected_a);
  const std::vector<Call> expected_v = {{"Write", "v.bin", 0, 500, 2, 500}, {"Read", "v.bin", 0, 500, 2, 1250}};
  EXPECT_EQ(on_v, expected_v);
  const std::vector<std::pair<bool, int64_t>> expected_syncs = {{false, 0}, {true, 0}};
  EXPECT_EQ(r.syncs, expected_syncs) << "fsync, then fdatasync";
}

TEST_F(IoFiles, WritesThroughEveryKindOfDupAreAttributedToTheFile) {
  const IoReplay r = record();
  EXPECT_EQ(r.events.at("Dup"), 5) << "dup, dup2, fcntl F_DUPFD, F_DUPFD_CLOEXEC, dup3";
  EXPECT_TRUE(r.write_fds.count({50, "b.bin"})) << "dup2's target";
  EXPECT_TRUE(r.write_fds.count({80, "b.bin"})) << "dup3's target";
  int copies_at_or_above_60 = 0;
  for (const auto& [fd, file] : r.write_fds) copies_at_or_above_60 += fd >= 60 && fd < 80 && file == "b.bin";
  EXPECT_EQ(copies_at_or_above_60, 2) << "the two fcntl copies";
  // fcntl's other commands (an int, a pointer, nothing) were passed on intact.
  EXPECT_NE(recorded_.out.find("cloexec 0 1; lock 0; access 1"), std::string::npos) << recorded_.out;
}

TEST_F(IoFiles, StdioBytesPerStreamAreTheFilesSizes) {
  const IoReplay r = record();
  ASSERT_EQ(size("c.txt"), 3004);
  EXPECT_EQ(r.stdio_written.at("c.txt"), 3004) << "fwrite + fputs";
  EXPECT_EQ(r.stdio_read.at("c.txt"), 3004) << "fread";
  EXPECT_EQ(r.stdio_written.at("d.txt"), size("d.txt")) << "fprintf + vfprintf";
  EXPECT_EQ(r.stdio_read.at("d.txt"), size("d.txt")) << "fgets";
  EXPECT_EQ(r.stdio_written.at("e.txt"), size("e.txt")) << "fprintf on an fdopen'ed stream";
  EXPECT_EQ(r.events.at("FDOpen"), 1);
  EXPECT_GE(r.events.at("FFlush"), 1);
  // The layers do not overlap: stdio's own reads and writes happen in libc.
  EXPECT_EQ(r.fd_written.count("c.txt"), 0u);
  EXPECT_EQ(r.fd_read.count("c.txt"), 0u);
}

TEST_F(IoFiles, FailedOpensCarryTheirErrno) {
  const IoReplay r = record();
  int failed = 0;
  for (const Open& o : r.opens)
    if (base_name(o.path) == "missing") {
      EXPECT_EQ(o.fd, -ENOENT);
      EXPECT_EQ(o.path, dir_ + "/missing") << "the path as the program passed it";
      ++failed;
    }
  EXPECT_EQ(failed, 1);
  failed = 0;
  for (const FOpen& o : r.fopens)
    if (base_name(o.path) == "missing") {
      EXPECT_EQ(o.fd, -ENOENT);
      EXPECT_EQ(o.stream, 0u) << "a null stream";
      ++failed;
    }
  EXPECT_EQ(failed, 1);
}

TEST_F(IoFiles, OutputAndErrnoAreUnchanged) {
  const Process plain = run(std::string(SPOOR_IO_FILES) + " " + dir_);
  ASSERT_EQ(plain.status, 0);
  EXPECT_NE(plain.out.find("errno kept"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("missing: fd -1 errno ENOENT"), std::string::npos) << plain.out;
  record();
  EXPECT_EQ(recorded_.out, plain.out);
}

TEST_F(IoFiles, EveryCallIsTimedFromBeforeTheCall) {
  const IoReplay r = record();
  EXPECT_GT(r.events.at("Read"), 0);
  EXPECT_EQ(r.untimed, 0) << "start_ticks is read before the call, the timestamp after";
}

TEST_F(IoFiles, OpensCarryTheirCallersStack) {
  const IoReplay r = record();
  const auto exe = r.modules.find(fs::canonical(SPOOR_IO_FILES).string());
  ASSERT_NE(exe, r.modules.end());
  // The shim's frames are skipped: the innermost frame is the program's call.
  auto called_from_program = [&](uint64_t stack) {
    const auto frame = r.innermost_frame.find(stack);
    return frame != r.innermost_frame.end() && frame->second >= exe->second.first &&
           frame->second < exe->second.second;
  };
  int opens = 0;
  for (const Open& o : r.opens)
    if (base_name(o.path) == "a.bin") {
      ++opens;
      EXPECT_TRUE(called_from_program(o.stack)) << "stack " << o.stack;
    }
  EXPECT_EQ(opens, 2);
  // The default spec enables every keyword: reads carry stacks too.
  ASSERT_FALSE(r.read_stacks.at("a.bin").empty());
  for (uint64_t stack : r.read_stacks.at("a.bin")) EXPECT_TRUE(called_from_program(stack)) << "stack " << stack;
}

TEST_F(IoFiles, ReadAndWriteStacksAreAKeyword) {
  const IoReplay r = record("Spoor.IO:0x3,Spoor.Stack");
  ASSERT_FALSE(r.read_stacks.at("a.bin").empty());
  for (uint64_t stack : r.read_stacks.at("a.bin")) EXPECT_EQ(stack, 0u);
  for (const Open& o : r.opens) {
    if (o.fd >= 0) {
      EXPECT_NE(o.stack, 0u) << "opens keep theirs";
    }
  }
}

TEST_F(IoFiles, TheLayersAreEnabledSeparately) {
  const IoReplay fd_only = record("Spoor.IO:0x1");
  EXPECT_GT(fd_only.events.count("Open"), 0u);
  for (const char* stdio : {"FOpen", "FRead", "FWrite", "FReadRun", "FWriteRun", "FClose", "FFlush", "FDOpen"})
    EXPECT_EQ(fd_only.events.count(stdio), 0u) << stdio;
  const IoReplay stdio_only = record("Spoor.IO:0x2");
  EXPECT_GT(stdio_only.events.count("FWrite") + stdio_only.events.count("FWriteRun"), 0u);
  for (const char* fd : {"Open", "Read", "Write", "Close", "Dup", "Seek", "Sync"})
    EXPECT_EQ(stdio_only.events.count(fd), 0u) << fd;
}

TEST_F(IoFiles, ADisabledProviderRecordsNothingAndChangesNothing) {
  const Process plain = run(std::string(SPOOR_IO_FILES) + " " + dir_);
  const IoReplay r = record("Spoor.Heap");
  EXPECT_TRUE(r.events.empty());
  EXPECT_EQ(recorded_.out, plain.out);
}

// The packer reads a record's body as 8-byte words: an I/O event's times
// and offsets pack fast only where they are whole words (bench/RESULTS.md,
// "Times and offsets out of the packer's model"). Every event of fixed size
// the shim writes, as the trace describes it, keeps its 8-byte fields at
// 8-byte offsets of its body.
TEST_F(IoFiles, FixedSizeEventsKeepTheir8ByteFieldsOnWords) {
  const std::string trace_path = record_trace();
  auto trace = reader::Trace::open(trace_path);
  ASSERT_TRUE(trace) << trace.error();
  std::set<std::string> checked;
  for (const reader::EventDescriptor& d : trace->events()) {
    if (d.provider->name.rfind("Spoor.", 0) != 0) continue;
    uint32_t offset = 0;
    std::vector<std::string> off_word;
    bool fixed = true;
    for (const reader::FieldDescriptor& f : d.fields) {
      const uint32_t size = spoor::format::fixed_field_size(f.type, 8);
      fixed = size != 0;
      if (!fixed) break;
      if (size == 8 && offset % 8 != 0) off_word.push_back(f.name + " at " + std::to_string(offset));
      offset += size;
    }
    if (!fixed) continue;
    checked.insert(d.name);
    EXPECT_TRUE(off_word.empty()) << d.name << ": " << ::testing::PrintToString(off_word);
  }
  for (const char* name : {"Read", "Write", "Seek", "Sync", "Close", "FWriteRun", "FPutcRun", "Alloc", "Realloc",
                           "ThreadStart", "ThreadEnd"})
    EXPECT_TRUE(checked.count(name)) << name << " is described in the trace";
  fs::remove(trace_path);
}

TEST_F(IoFiles, FortifiedCallsAreRecorded) {
  // The program really calls the checking forms.
  EXPECT_EQ(spoor::test::missing_imports(SPOOR_IO_FORTIFY, {"__open_2", "__openat_2", "__read_chk", "__pread_chk",
                                                              "__fgets_chk", "__fread_chk", "__fprintf_chk",
                                                              "__vfprintf_chk"}),
            std::vector<std::string>{});

  const std::string trace = dir_ + ".spoor";
  const Process traced = run(kSpoor + " record -o " + trace + " -- " + SPOOR_IO_FORTIFY + " " + dir_);
  ASSERT_EQ(traced.status, 0) << traced.err;
  const Process plain = run(std::string(SPOOR_IO_FORTIFY) + " " + dir_);
  EXPECT_EQ(traced.out, plain.out);
  const IoReplay r = replay(trace);
  fs::remove(trace);
  const int64_t size = static_cast<int64_t>(fs::file_size(dir_ + "/f.txt"));
  ASSERT_GT(size, 0);
  EXPECT_EQ(r.unattributed, 0);
  EXPECT_EQ(r.fd_read.at("f.txt"), 2 * size) << "__read_chk, then __pread_chk";
  EXPECT_EQ(r.stdio_written.at("f.txt"), size) << "__fprintf_chk + __vfprintf_chk";
  EXPECT_EQ(r.stdio_read.at("f.txt"), 2 * size) << "__fgets_chk, then __fread_chk";
  int by_open_2 = 0, by_openat_2 = 0;
  for (const Open& o : r.opens) {
    by_open_2 += o.dirfd == -100 && base_name(o.path) == "f.txt" && o.fd >= 0;
    by_openat_2 += o.dirfd >= 0 && o.path == "f.txt" && o.fd >= 0;
  }
  EXPECT_EQ(by_open_2, 1);
  EXPECT_EQ(by_openat_2, 1);
}

TEST(IoRecord, AThreadCancelledInsideAHookIsCancelled) {
  const std::string trace = temp_path("io-cancel.spoor");
  const Process r = run(kSpoor + " record -o " + trace + " -- " + SPOOR_IO_CANCEL);
  fs::remove(trace);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "cancelled 1\n");
}

}  // namespace
