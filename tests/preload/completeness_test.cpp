// What a trace of an unmodified program holds beyond the program's own
// calls: threads still running when the process ends get their ThreadEnd,
// descriptors the process inherited or made (pipe, socketpair, eventfd,
// memfd) are named (FdInherited, FdCreated), bytes moved
// inside the kernel (sendfile, splice, tee, copy_file_range) and
// descriptors closed by range are recorded, and allocations made before
// the shim attached are in the trace.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
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

using namespace spoor::test::fields;  // i64, u64, ptr, str, blob

// Every event of the trace, in time order, as (provider.event, event).
template <class Visit>
void each_event(const std::string& path, Visit visit) {
  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage());
  reader::EventReader events(trace.value());
  reader::Event e;
  while (events.next(e)) visit(std::string(e.descriptor->name), e);
}

// Each of `stacks` starts in `program`'s own code: the shim's frames are
// skipped.
void expect_stacks_start_in(spoor::test::fields::CallSites& sites, const std::string& program,
                            const std::vector<uint64_t>& stacks) {
  const auto exe = sites.modules.find(fs::canonical(program).string());
  ASSERT_NE(exe, sites.modules.end()) << program << " has no ModuleLoad";
  for (uint64_t stack : stacks) {
    const uint64_t ip = sites.innermost_frame[stack];
    EXPECT_TRUE(ip >= exe->second.first && ip < exe->second.second) << "stack " << stack;
  }
}

// --- threads still running when the process ends ---------------------------

struct Ends {
  std::map<uint64_t, int> starts, ends, with_process;
};

Ends thread_ends(const std::string& path) {
  Ends r;
  each_event(path, [&](const std::string& name, const reader::Event& e) {
    if (name == "ThreadStart") r.starts[u64(e, "tid")]++;
    if (name != "ThreadEnd") return;
    r.ends[u64(e, "tid")]++;
    if (std::get<bool>(*e.field("with_process"))) r.with_process[u64(e, "tid")]++;
  });
  return r;
}

std::vector<uint64_t> tids_named(const std::string& out, const std::string& key) {
  std::vector<uint64_t> tids;
  std::istringstream in(out);
  std::string k;
  uint64_t tid;
  while (in >> k >> tid)
    if (k == key) tids.push_back(tid);
  return tids;
}

struct ExitCase {
  const char* how;
  int status;
};

class ThreadsAtProcessEnd : public ::testing::TestWithParam<ExitCase> {};

TEST_P(ThreadsAtProcessEnd, EveryStartedThreadHasOneThreadEnd) {
  const ExitCase c = GetParam();
  const std::string path = temp_path(std::string("exit-") + c.how + ".spoor");
  const Process p = run(kSpoor + " record -o " + path + " -- " + SPOOR_EXIT_THREADS + " " + c.how);
  EXPECT_EQ(p.status, c.status) << "the program's exit status, untouched: " << p.err;
  const auto main_tid = tids_named(p.out, "main");
  const auto workers = tids_named(p.out, "worker");
  ASSERT_EQ(main_tid.size(), 1u) << p.out;
  ASSERT_EQ(workers.size(), 2u) << p.out;
  const Ends r = thread_ends(path);
  fs::remove(path);
  for (uint64_t tid : {main_tid[0], workers[0], workers[1]}) {
    SCOPED_TRACE(tid);
    EXPECT_EQ(r.starts.count(tid) ? r.starts.at(tid) : 0, 1);
    EXPECT_EQ(r.ends.count(tid) ? r.ends.at(tid) : 0, 1) << "one ThreadEnd, not none";
  }
  // The threads blocked in pause() ended with the process; a worker that
  // called exit() is still running its destructors: it ends with it too.
  EXPECT_EQ(r.with_process.count(workers[0]) ? r.with_process.at(workers[0]) : 0, 1);
  EXPECT_EQ(r.with_process.count(main_tid[0]) ? r.with_process.at(main_tid[0]) : 0, 1);
}

INSTANTIATE_TEST_SUITE_P(Endings, ThreadsAtProcessEnd,
                         ::testing::Values(ExitCase{"main-exit", 5}, ExitCase{"main-return", 6},
                                           ExitCase{"worker-exit", 7}, ExitCase{"worker-_exit", 8}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.how;
                           for (char& ch : name)
                             if (ch == '-' || ch == '_') ch = 'X';
                           return name;
                         });

// --- inherited descriptors, kernel-side copies, close_range ----------------

class IoMoves : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_path("moves");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ + "/in.txt") << std::string(777, 'i');
    trace_ = dir_ + ".spoor";
    recorded_ = run(kSpoor + " record -o " + trace_ + " -- " + SPOOR_IO_MOVES + " " + dir_ + " < " + dir_ +
                    "/in.txt > " + dir_ + "/out.txt");
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove(trace_);
  }
  std::string dir_, trace_;
  Process recorded_;
};

TEST_F(IoMoves, InheritedDescriptorsAreNamedByWhatTheyAre) {
  ASSERT_EQ(recorded_.status, 0) << recorded_.err;
  EXPECT_NE(recorded_.err.find("copied 777"), std::string::npos) << recorded_.err;
  EXPECT_EQ(fs::file_size(dir_ + "/out.txt"), 777u) << "the program's stdout, untouched";
  std::map<int64_t, std::string> inherited;
  std::map<int64_t, int64_t> offsets;
  each_event(trace_, [&](const std::string& name, const reader::Event& e) {
    if (name != "FdInherited") return;
    EXPECT_FALSE(inherited.count(i64(e, "fd"))) << "described once";
    inherited[i64(e, "fd")] = str(e, "path");
    offsets[i64(e, "fd")] = i64(e, "offset");
    // A close-on-exec descriptor did not come through the exec: the shim
    // made it before it listed the program's (as libunwind's pipe was,
    // while the shim kept it open).
    EXPECT_EQ(i64(e, "flags") & O_CLOEXEC, 0) << "fd " << i64(e, "fd") << " (" << str(e, "path")
                                              << ") is the shim's, not the program's";
  });
  ASSERT_TRUE(inherited.count(0));
  ASSERT_TRUE(inherited.count(1));
  EXPECT_EQ(inherited[0], fs::canonical(dir_ + "/in.txt").string());
  EXPECT_EQ(inherited[1], fs::canonical(dir_ + "/out.txt").string());
  EXPECT_EQ(offsets[0], 0) << "nothing read yet";
  EXPECT_TRUE(inherited.count(2)) << "run() sends stderr to a file";
  // The shim's own connection to the recorder is the only socket the
  // program is given; the test runner may pass other descriptors on.
  for (const auto& [fd, path] : inherited)
    EXPECT_EQ(path.rfind("socket:", 0), std::string::npos) << "fd " << fd << " is the shim's, not the program's";
}

TEST_F(IoMoves, TheReportNamesInheritedDescriptorsAndCountsKernelCopies) {
  ASSERT_EQ(recorded_.status, 0) << recorded_.err;
  const Process report = run(kSpoor + " report --io --format json " + trace_);
  ASSERT_EQ(report.status, 0) << report.err;
  const auto j = nlohmann::json::parse(report.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << report.out;
  std::map<std::string, nlohmann::json> files;
  for (const auto& f : j["io"]["files"]) files[f["path"].get<std::string>()] = f;
  const std::string in = fs::canonical(dir_ + "/in.txt").string(), out = fs::canonical(dir_ + "/out.txt").string();
  ASSERT_TRUE(files.count(in)) << report.out;
  ASSERT_TRUE(files.count(out)) << report.out;
  EXPECT_EQ(files[in]["bytes_read"], 777);
  EXPECT_EQ(files[out]["bytes_written"], 777);
  EXPECT_FALSE(files.count("stdin")) << "stdin is named by its file";
  // dst.bin: copy_file_range 1000 + sendfile 1000 + splice 300.
  ASSERT_EQ(fs::file_size(dir_ + "/dst.bin"), 2300u);
  const std::string dst = dir_ + "/dst.bin", src = dir_ + "/src.bin";
  ASSERT_TRUE(files.count(dst)) << report.out;
  EXPECT_EQ(files[dst]["bytes_written"], 2300);
  EXPECT_EQ(files[src]["bytes_read"], 2300) << "each copy reads its source";
  EXPECT_EQ(files[src]["bytes_written"], 1000);
}

TEST_F(IoMoves, KernelCopiesAndRangeClosesAreRecordedWithTheirResults) {
  ASSERT_EQ(recorded_.status, 0) << recorded_.err;
  std::map<uint64_t, std::vector<int64_t>> copies;  // call -> results
  std::vector<std::pair<int64_t, uint64_t>> ranges;
  int untimed = 0;
  each_event(trace_, [&](const std::string& name, const reader::Event& e) {
    if (name == "Copy") {
      copies[u64(e, "call")].push_back(i64(e, "result"));
      untimed += u64(e, "start_ticks") == 0 || u64(e, "start_ticks") > e.ticks;
    } else if (name == "CloseRange") {
      EXPECT_EQ(i64(e, "result"), 0);
      ranges.emplace_back(i64(e, "fd"), u64(e, "last"));
    }
  });
  EXPECT_EQ(copies[0], std::vector<int64_t>({1000})) << "sendfile";
  EXPECT_EQ(copies[1], std::vector<int64_t>({300, 300})) << "splice in and out";
  EXPECT_EQ(copies[2], std::vector<int64_t>({300})) << "tee";
  EXPECT_EQ(copies[3], std::vector<int64_t>({1000})) << "copy_file_range";
  EXPECT_EQ(untimed, 0);
  ASSERT_EQ(ranges.size(), 2u) << "close_range and closefrom";
  EXPECT_EQ(ranges[0], std::make_pair(int64_t{200}, uint64_t{203}));
  EXPECT_EQ(ranges[1], std::make_pair(int64_t{900}, uint64_t{0xffffffff})) << "closefrom: to the last";
}

// --- descriptors the program makes (pipe, socketpair, eventfd, memfd) -----

// fd_pipes.c: a pipe and a socketpair shared by a parent and its fork
// child, an eventfd and a memfd. Every one is named by what it is, and a
// pipe's two ends in two processes are one row.
TEST(FdCreated, MadeDescriptorsAreNamedAndAPipeIsOneRowAcrossProcesses) {
  const std::string trace = temp_path("fd_pipes") + ".spoor";
  const Process recorded = run(kSpoor + " record -o " + trace + " -- " + SPOOR_FD_PIPES);
  ASSERT_EQ(recorded.status, 0) << recorded.err;
  std::istringstream names(recorded.out);
  std::string pipe, parent_end, child_end;
  names >> pipe >> parent_end >> child_end;
  ASSERT_EQ(pipe.rfind("pipe:[", 0), 0u) << recorded.out;

  std::map<std::string, int> created;  // path -> FdCreated events
  each_event(trace, [&](const std::string& name, const reader::Event& e) {
    if (name != "FdCreated") return;
    created[str(e, "path")]++;
    EXPECT_GT(u64(e, "start_ticks"), 0u);
  });
  EXPECT_EQ(created[pipe], 2) << "one per end";
  EXPECT_EQ(created[parent_end], 1);
  EXPECT_EQ(created[child_end], 1);
  EXPECT_EQ(created["anon_inode:[eventfd]"], 1);
  EXPECT_EQ(created["/memfd:spoor-test (deleted)"], 1);

  const Process text = run(kSpoor + " report --io " + trace);
  EXPECT_NE(text.out.find(pipe + " from " + fs::path(SPOOR_FD_PIPES).filename().string() + " to "), std::string::npos)
      << text.out;
  const Process report = run(kSpoor + " report --io --format json " + trace);
  fs::remove(trace);
  ASSERT_EQ(report.status, 0) << report.err;
  const auto j = nlohmann::json::parse(report.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << report.out;
  std::map<std::string, nlohmann::json> files;
  for (const auto& f : j["io"]["files"]) {
    const std::string path = f["path"].get<std::string>();
    files[path] = f;
    // "fd 6" alone would be a number shared by unrelated descriptors.
    if (path.rfind("fd ", 0) == 0) {
      EXPECT_NE(path.find(" in pid "), std::string::npos) << path;
    }
  }
  ASSERT_TRUE(files.count(pipe)) << report.out;
  EXPECT_EQ(files[pipe]["bytes_written"], 100) << "the parent's end";
  EXPECT_EQ(files[pipe]["bytes_read"], 100) << "the child's end, the same pipe";
  EXPECT_EQ(files[pipe]["pids"].size(), 2u) << report.out;
  // Its ends: the parent wrote, its fork child read (one program).
  const std::string program = fs::path(SPOOR_FD_PIPES).filename().string();
  EXPECT_EQ(files[pipe]["writers"], nlohmann::json::array({program})) << files[pipe].dump();
  EXPECT_EQ(files[pipe]["readers"], nlohmann::json::array({program})) << files[pipe].dump();
  ASSERT_TRUE(files.count(child_end)) << report.out;
  EXPECT_EQ(files[child_end]["bytes_written"], 10);
  ASSERT_TRUE(files.count(parent_end)) << report.out;
  EXPECT_EQ(files[parent_end]["bytes_read"], 10);
  EXPECT_EQ(files["anon_inode:[eventfd]"]["bytes_written"], 8);
  EXPECT_EQ(files["/memfd:spoor-test (deleted)"]["bytes_written"], 5);
}

// --- POSIX asynchronous I/O ------------------------------------------------

// aio.c: two aio_writes and an aio_fsync, a lio_listio of two reads and a
// LIO_NOP, an aio_read64, and a read on a closed descriptor that fails
// later. Each request is an AioSubmit from the program's call, each
// result an AioReturn of the same control block, and the report counts
// the bytes as the file's.
TEST(PosixAio, RequestsAndResultsAreRecordedAndTheirBytesAreTheFiles) {
  const std::string dir = temp_path("aio");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = dir + ".spoor";
  const Process p = run(kSpoor + " record -o " + trace + " -- " + SPOOR_AIO + " " + dir);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("aio: wrote 5096, synced 0, listed 5096, read64 100, closed fd: Bad file descriptor"),
            std::string::npos)
      << p.err;
  std::multiset<std::pair<uint64_t, uint64_t>> submitted;  // (call, requested)
  std::map<uint64_t, int> pending;                         // aiocb -> requests not collected
  std::multiset<int64_t> results;
  std::vector<uint64_t> stacks;
  spoor::test::fields::CallSites sites;
  int unmatched = 0, refused = 0;
  each_event(trace, [&](const std::string& name, const reader::Event& e) {
    sites.note(e);
    if (name == "AioSubmit") {
      submitted.emplace(u64(e, "call"), u64(e, "requested"));
      refused += i64(e, "result") != 0;
      ++pending[ptr(e, "aiocb")];
      stacks.push_back(u64(e, "stack"));
    } else if (name == "AioReturn") {
      results.insert(i64(e, "result"));
      unmatched += pending[ptr(e, "aiocb")]-- != 1;
    }
  });
  constexpr uint64_t kRead = 0, kWrite = 1, kSync = 2;  // io_provider.h: kIoAio*
  EXPECT_EQ(submitted, (std::multiset<std::pair<uint64_t, uint64_t>>{
                           {kWrite, 4096}, {kWrite, 1000}, {kSync, 0}, {kRead, 3000}, {kRead, 2096}, {kRead, 100},
                           {kRead, 100}}))
      << "no request for the LIO_NOP entry";
  EXPECT_EQ(refused, 0) << "glibc takes a closed descriptor's request and fails it later";
  EXPECT_EQ(results, (std::multiset<int64_t>{4096, 1000, 0, 3000, 2096, 100, -EBADF}));
  EXPECT_EQ(unmatched, 0) << "each result collected once, from a block handed over before";
  // The shim's frames are skipped: each stack starts in the program.
  expect_stacks_start_in(sites, SPOOR_AIO, stacks);

  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, true);
  ASSERT_EQ(rows.failure, "");
  std::map<std::string, nlohmann::json>& files = rows.files;
  const std::string bin = "aio.bin";
  ASSERT_EQ(fs::file_size(dir + "/" + bin), 5096u);
  ASSERT_TRUE(files.count(bin)) << rows.report.dump();
  EXPECT_EQ(files[bin]["bytes_written"], 5096) << "the file's size";
  EXPECT_EQ(files[bin]["bytes_read"], 5096 + 100);
  EXPECT_EQ(files[bin]["errors"], 0) << "the failed read was on a descriptor closed before";
  fs::remove_all(dir);
  fs::remove(trace);
}

// --- Linux AIO (io_submit, io_getevents) -----------------------------------

// linux_aio.c: a write, a read and a vectored read, an fdatasync, through
// libaio or through syscall() itself (libaio's own functions make their
// system calls through syscall(): each request must be recorded once), or
// through libaio with the results reaped from the kernel's ring by the
// program itself (read by the shim at the next io_submit and at
// io_destroy).
// Each request is an AioSubmit with the program's stack, each result an
// AioReturn of the same control block, and the report counts the bytes as
// the file's.
class LinuxAio : public ::testing::TestWithParam<const char*> {};

TEST_P(LinuxAio, RequestsAndResultsAreRecordedOnceAndTheirBytesAreTheFiles) {
  const std::string dir = temp_path(std::string("linux-aio-") + GetParam());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = dir + ".spoor";
  const std::string command = std::string(SPOOR_LINUX_AIO) + " " + dir + " " + GetParam();
  const Process untraced = run(command);
  if (untraced.status == 77) GTEST_SKIP() << "Linux AIO is not allowed here: " << untraced.err;
  const Process p = run(kSpoor + " record -o " + trace + " -- " + command);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("linux_aio: all results as expected"), std::string::npos) << p.err;
  std::multiset<std::pair<uint64_t, uint64_t>> submitted;  // (call, requested)
  std::multiset<int64_t> results;
  std::vector<uint64_t> stacks;
  spoor::test::fields::CallSites sites;
  each_event(trace, [&](const std::string& name, const reader::Event& e) {
    sites.note(e);
    if (name == "AioSubmit") {
      submitted.emplace(u64(e, "call"), u64(e, "requested"));
      stacks.push_back(u64(e, "stack"));
    } else if (name == "AioReturn") {
      results.insert(i64(e, "result"));
    }
  });
  constexpr uint64_t kRead = 0, kWrite = 1, kDataSync = 3;  // io_provider.h: kIoAio*
  EXPECT_EQ(submitted, (std::multiset<std::pair<uint64_t, uint64_t>>{
                           {kWrite, 4096}, {kRead, 1000}, {kRead, 0}, {kDataSync, 0}}));
  EXPECT_EQ(results, (std::multiset<int64_t>{4096, 1000, 200, 0}));
  expect_stacks_start_in(sites, SPOOR_LINUX_AIO, stacks);
  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, true);
  ASSERT_EQ(rows.failure, "");
  const std::string bin = "linux_aio.bin";
  ASSERT_TRUE(rows.files.count(bin)) << rows.report.dump();
  EXPECT_EQ(rows.files[bin]["bytes_written"], 4096);
  EXPECT_EQ(rows.files[bin]["bytes_read"], 1000 + 200);
  EXPECT_EQ(rows.files[bin]["errors"], 0);
  const nlohmann::json& counts = rows.report["io"]["aio"];
  EXPECT_EQ(counts["requests"], 4) << counts.dump();
  EXPECT_EQ(counts["results"], 4);
  EXPECT_EQ(counts["uncollected"], 0);
  fs::remove_all(dir);
  fs::remove(trace);
}

INSTANTIATE_TEST_SUITE_P(Through, LinuxAio, ::testing::Values("libaio", "syscall", "ring"));

// --- io_uring ---------------------------------------------------------------

// uring.c: a write and a writev handed over with io_uring_submit, an fsync
// with io_uring_submit_and_wait, a read, a readv and a read of a closed
// descriptor with io_uring_submit, then a read of the file by its index
// among the ring's registered files, each completion reaped with the
// inline io_uring_wait_cqe. Each request is a UringSubmit with the
// program's stack, each completion a UringComplete of the same ring and
// user_data, and the report counts the bytes as the file's.
TEST(IoUring, RequestsAndCompletionsAreRecordedAndTheirBytesAreTheFiles) {
  const std::string dir = temp_path("uring");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = dir + ".spoor";
  const Process untraced = run(std::string(SPOOR_URING) + " " + dir);
  if (untraced.status == 77)
    GTEST_SKIP() << "io_uring is not allowed here: " << untraced.err;
  const Process p = run(kSpoor + " record -o " + trace + " -- " + SPOOR_URING + " " + dir);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("uring: all results as expected"), std::string::npos) << p.err;
  constexpr uint64_t kReadv = 1, kWritev = 2, kFsync = 3, kRead = 22, kWrite = 23;  // IORING_OP_*
  std::multiset<std::tuple<uint64_t, uint64_t, uint64_t>> submitted;  // (user_data, opcode, requested)
  std::map<uint64_t, int64_t> completed;                              // user_data -> result
  std::map<uint64_t, int64_t> ring_of;                                // user_data -> ring
  std::map<uint64_t, std::tuple<int64_t, int64_t, uint64_t>> placed;  // user_data -> (fd, offset, flags)
  std::vector<uint64_t> stacks;
  spoor::test::fields::CallSites sites;
  int completed_before_submitted = 0, unseen = 0;
  each_event(trace, [&](const std::string& name, const reader::Event& e) {
    sites.note(e);
    if (name == "UringSubmit") {
      submitted.emplace(u64(e, "user_data"), u64(e, "call"), u64(e, "requested"));
      ring_of[u64(e, "user_data")] = i64(e, "ring");
      placed[u64(e, "user_data")] = {i64(e, "fd"), i64(e, "offset"), u64(e, "flags")};
      stacks.push_back(u64(e, "stack"));
    } else if (name == "UringComplete") {
      completed_before_submitted += ring_of.count(u64(e, "user_data")) == 0;
      EXPECT_EQ(i64(e, "ring"), ring_of[u64(e, "user_data")]);
      EXPECT_TRUE(completed.emplace(u64(e, "user_data"), i64(e, "result")).second) << "one completion each";
    } else if (name == "UringUnseen") {
      ++unseen;
    }
  });
  EXPECT_EQ(submitted, (std::multiset<std::tuple<uint64_t, uint64_t, uint64_t>>{
                           {1, kWrite, 4096}, {2, kWritev, 0}, {3, kFsync, 0}, {4, kRead, 5596}, {5, kReadv, 0},
                           {6, kRead, 100}, {7, kRead, 100}}));
  EXPECT_EQ(completed, (std::map<uint64_t, int64_t>{
                           {1, 4096}, {2, 1500}, {3, 0}, {4, 5596}, {5, 200}, {6, -EBADF}, {7, 100}}));
  EXPECT_EQ(completed_before_submitted, 0);
  EXPECT_EQ(unseen, 0);
  // The writev starts after the 4096-byte write; the last read names the
  // file by its index (0) among the registered files (IOSQE_FIXED_FILE).
  ASSERT_EQ(placed.size(), 7u);
  const int64_t file = std::get<0>(placed[1]);
  EXPECT_EQ(placed[2], std::make_tuple(file, int64_t{4096}, uint64_t{0}));
  EXPECT_EQ(placed[4], std::make_tuple(file, int64_t{0}, uint64_t{0}));
  EXPECT_EQ(placed[7], std::make_tuple(int64_t{0}, int64_t{0}, uint64_t{1}));
  EXPECT_NE(std::get<0>(placed[6]), file) << "the closed descriptor";
  // Each stack starts in the program, at its submit call.
  expect_stacks_start_in(sites, SPOOR_URING, stacks);

  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, true);
  ASSERT_EQ(rows.failure, "");
  std::map<std::string, nlohmann::json>& files = rows.files;
  const std::string bin = "uring.bin";
  ASSERT_EQ(fs::file_size(dir + "/" + bin), 5596u);
  ASSERT_TRUE(files.count(bin)) << rows.report.dump();
  EXPECT_EQ(files[bin]["bytes_written"], 5596) << "the file's size";
  EXPECT_EQ(files[bin]["bytes_read"], 5596 + 200 + 100) << "the registered file's read counts as the file's";
  const nlohmann::json& counts = rows.report["io"]["io_uring"];
  EXPECT_EQ(counts["requests"], 7) << rows.report["io"].dump();
  EXPECT_EQ(counts["completions"], 7);
  EXPECT_EQ(counts["uncollected"], 0);
  fs::remove_all(dir);
  fs::remove(trace);
}

// uring.c --reaped-unseen: eight timeouts complete while the program makes
// no liburing call, and it reaps them all with inline functions before
// io_uring_queue_exit. At the exit the completion ring (8 slots) has been
// reaped to its end: its newest 3 completions are read, the older 5 (whose
// slots the kernel may have reused) are counted unseen, and the report
// says their requests have no completion.
TEST(IoUring, CompletionsReapedWhereTheShimCannotReadThemAreCountedUnseen) {
  const std::string trace = temp_path("uring-unseen.spoor");
  const Process untraced = run(std::string(SPOOR_URING) + " --reaped-unseen");
  if (untraced.status == 77) GTEST_SKIP() << "io_uring is not allowed here: " << untraced.err;
  const Process p = run(kSpoor + " record -o " + trace + " -- " + SPOOR_URING + " --reaped-unseen");
  ASSERT_EQ(p.status, 0) << p.err;
  std::set<uint64_t> completed;
  uint64_t unseen = 0, submitted = 0;
  each_event(trace, [&](const std::string& name, const reader::Event& e) {
    if (name == "UringSubmit") ++submitted;
    if (name == "UringComplete") completed.insert(u64(e, "user_data"));
    if (name == "UringUnseen") unseen += u64(e, "calls");
  });
  EXPECT_EQ(submitted, 8u);
  EXPECT_EQ(completed, (std::set<uint64_t>{6, 7, 8})) << "the newest, fewer than half a ring before the tail";
  EXPECT_EQ(unseen, 5u);
  const spoor::test::ReportJson r = spoor::test::report_json(kSpoor, "--io", trace);
  ASSERT_EQ(r.failure, "");
  const nlohmann::json& counts = r.report["io"]["io_uring"];
  EXPECT_EQ(counts["completions"], 3) << counts.dump();
  EXPECT_EQ(counts["uncollected"], 5);
  EXPECT_EQ(counts["unseen"], 5);
  const Process text = run(kSpoor + " report --io " + trace);
  EXPECT_NE(text.out.find("5 requests have no completion in the trace"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("5 completions could not be read"), std::string::npos) << text.out;
  fs::remove(trace);
}

// fio's io_uring engine sets its ring up through syscall() but submits and
// waits with inline system calls: its requests pass no call the shim sees.
// The ring is still followed from its set-up, and the completions it
// posted are all accounted for when fio unmaps it: those still readable
// then, and the rest counted as unreadable, 256 in all for 256 writes.
TEST(IoUring, ARingDrivenByInlineSystemCallsHasEveryCompletionAccountedFor) {
  if (run("command -v fio").status != 0) GTEST_SKIP() << "fio is not installed (scripts/install-test-deps.sh)";
  const std::string dir = temp_path("uring-fio");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = dir + ".spoor";
  const std::string fio = "fio --name=w --filename=" + dir +
                          "/fio.dat --size=1M --rw=write --bs=4k --ioengine=io_uring --iodepth=8 "
                          "--output-format=terse";
  const Process untraced = run(fio);
  if (untraced.status != 0) GTEST_SKIP() << "fio's io_uring engine does not run here: " << untraced.err;
  const Process p = run(kSpoor + " record -o " + trace + " -- " + fio);
  ASSERT_EQ(p.status, 0) << p.err;
  const spoor::test::ReportJson r = spoor::test::report_json(kSpoor, "--io", trace);
  ASSERT_EQ(r.failure, "");
  const nlohmann::json& counts = r.report["io"]["io_uring"];
  EXPECT_EQ(counts["requests"], 0) << counts.dump();
  EXPECT_EQ(counts["completions"].get<uint64_t>() + counts["unseen"].get<uint64_t>(), 256u) << counts.dump();
  EXPECT_EQ(counts["unmatched"], counts["completions"]) << counts.dump();
  fs::remove_all(dir);
  fs::remove(trace);
}

// uring_raw.c: a ring driven with syscall() and no liburing (set up,
// mapped in three parts, fed and reaped by hand): a write, then a read and
// a read of a closed descriptor, then (the file registered with
// io_uring_register) a read by its index there, each batch submitted and
// waited for with one io_uring_enter. Read like liburing's: each request a
// UringSubmit with the program's stack, each completion a UringComplete,
// the bytes the file's.
TEST(IoUring, ARingDrivenThroughSyscallIsReadToo) {
  const std::string dir = temp_path("uring-raw");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = dir + ".spoor";
  const Process untraced = run(std::string(SPOOR_URING_RAW) + " " + dir);
  if (untraced.status == 77) GTEST_SKIP() << "io_uring is not allowed here: " << untraced.err;
  const Process p = run(kSpoor + " record -o " + trace + " -- " + SPOOR_URING_RAW + " " + dir);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("uring_raw: all results as expected"), std::string::npos) << p.err;
  constexpr uint64_t kRead = 22, kWrite = 23;  // IORING_OP_*
  std::multiset<std::tuple<uint64_t, uint64_t, uint64_t>> submitted;  // (user_data, opcode, requested)
  std::map<uint64_t, int64_t> completed;
  std::vector<uint64_t> stacks;
  spoor::test::fields::CallSites sites;
  each_event(trace, [&](const std::string& name, const reader::Event& e) {
    sites.note(e);
    if (name == "UringSubmit") {
      submitted.emplace(u64(e, "user_data"), u64(e, "call"), u64(e, "requested"));
      stacks.push_back(u64(e, "stack"));
    } else if (name == "UringComplete") {
      EXPECT_TRUE(completed.emplace(u64(e, "user_data"), i64(e, "result")).second) << "one completion each";
    }
  });
  EXPECT_EQ(submitted,
            (std::multiset<std::tuple<uint64_t, uint64_t, uint64_t>>{
                {1, kWrite, 3000}, {2, kRead, 1000}, {3, kRead, 50}, {4, kRead, 100}}));
  EXPECT_EQ(completed, (std::map<uint64_t, int64_t>{{1, 3000}, {2, 1000}, {3, -EBADF}, {4, 100}}));
  ASSERT_EQ(stacks.size(), 4u);
  expect_stacks_start_in(sites, SPOOR_URING_RAW, stacks);
  spoor::test::IoReportRows rows = spoor::test::io_report_rows(kSpoor, trace, true);
  ASSERT_EQ(rows.failure, "");
  const std::string bin = "uring_raw.bin";
  ASSERT_EQ(fs::file_size(dir + "/" + bin), 3000u);
  ASSERT_TRUE(rows.files.count(bin)) << rows.report.dump();
  EXPECT_EQ(rows.files[bin]["bytes_written"], 3000);
  EXPECT_EQ(rows.files[bin]["bytes_read"], 1000 + 100) << "the registered file's read counts as the file's";
  EXPECT_EQ(rows.report["io"]["io_uring"]["uncollected"], 0);
  EXPECT_EQ(rows.report["io"]["io_uring"]["unmatched"], 0);
  EXPECT_EQ(rows.report["io"]["io_uring"]["unseen"], 0);
  fs::remove_all(dir);
  fs::remove(trace);
}

// The shim's syscall() stands in for glibc's for every number: results,
// errno, a sixth argument and a clone's child are as without it. openat2,
// which programs reach only through syscall(), is an Open: the path, the
// open_how's flags, and the descriptor or -errno.
TEST(IoUring, SyscallBehavesAsGlibcsForOtherNumbersAndOpenat2IsAnOpen) {
  const Process untraced = run(std::string(SPOOR_URING_RAW) + " --plain");
  ASSERT_EQ(untraced.status, 0) << untraced.err;
  const std::string trace = temp_path("syscall-plain.spoor");
  const Process p = run(kSpoor + " record -o " + trace + " -- " + SPOOR_URING_RAW + " --plain");
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("syscall: as expected"), std::string::npos) << p.err;
  std::vector<std::pair<int64_t, int64_t>> opens;  // (flags, fd) of the Opens of /dev/null
  each_event(trace, [&](const std::string& name, const reader::Event& e) {
    if (name == "Open" && str(e, "path") == "/dev/null") opens.emplace_back(i64(e, "flags"), i64(e, "fd"));
  });
  ASSERT_EQ(opens.size(), 2u) << "both openat2 calls";
  EXPECT_EQ(opens[0].first, O_RDONLY | O_CLOEXEC);
  EXPECT_GE(opens[0].second, 0);
  EXPECT_EQ(opens[1].second, -EINVAL) << "an open_how too small: its flags are not read";
  EXPECT_EQ(opens[1].first, 0);
  fs::remove(trace);
}

// --- allocations before the shim attached ----------------------------------

TEST(EarlyAllocations, ALibraryConstructorsBlocksAreInTheTrace) {
  const std::string path = temp_path("early.spoor");
  const Process p = run(kSpoor + " record -o " + path + " -- " + SPOOR_EARLY_ALLOC_MAIN);
  ASSERT_EQ(p.status, 0) << p.err;
  std::map<uint64_t, int> allocs;   // size -> count (the test's sizes only)
  std::map<uint64_t, uint64_t> ptr_size;
  std::map<uint64_t, int> freed;    // size -> frees
  each_event(path, [&](const std::string& name, const reader::Event& e) {
    if (e.provider->name != "Spoor.Heap") return;
    if (name == "Alloc") {
      const uint64_t size = u64(e, "size");
      if ((size >= 12345 && size <= 12347) || size == 23456) {
        allocs[size]++;
        ptr_size[std::get<reader::Pointer>(*e.field("ptr")).address] = size;
      }
    } else if (name == "Free") {
      auto it = ptr_size.find(std::get<reader::Pointer>(*e.field("ptr")).address);
      if (it != ptr_size.end()) {
        freed[it->second]++;
        ptr_size.erase(it);
      }
    }
  });
  fs::remove(path);
  EXPECT_EQ(allocs[12345], 1) << "the constructor's block, freed by main";
  EXPECT_EQ(allocs[12346], 1) << "allocated and freed before attach: still a call";
  EXPECT_EQ(allocs[12347], 1) << "the constructor's block, never freed";
  EXPECT_EQ(allocs[23456], 1) << "the program's static initializer (after attach)";
  EXPECT_EQ(freed[12345], 1);
  EXPECT_EQ(freed[12346], 1);
  EXPECT_EQ(freed[12347], 0) << "leaked";
  EXPECT_EQ(freed[23456], 1);
}

// More allocations before attach than the shim keeps: the rest are lost
// events, and spoor record says that is why.
TEST(EarlyAllocations, ThosePastThePreAttachLogAreLostWithTheirCause) {
  const std::string path = temp_path("early-many.spoor");
  const Process p = run("SPOOR_TEST_EARLY_BLOCKS=40000 " + kSpoor + " record -o " + path + " -- " + SPOOR_EARLY_ALLOC_MAIN);
  ASSERT_EQ(p.status, 0) << p.err;
  unsigned long long lost = 0;
  const size_t at = p.err.find(" events, ");
  ASSERT_NE(at, std::string::npos) << p.err;
  ASSERT_EQ(std::sscanf(p.err.c_str() + at, " events, %llu lost", &lost), 1) << p.err;
  // 40,003 blocks and what the C library allocated first, in a log of 32,768.
  EXPECT_GE(lost, 40003u - 32768u) << p.err;
  EXPECT_LT(lost, 40003u - 32768u + 100u) << p.err;
  EXPECT_NE(p.err.find(" lost (allocations libraries' constructors made before Spoor attached, past the 32,768 it "
                       "keeps for them)"),
            std::string::npos)
      << p.err;
  fs::remove(path);
}

// The log keeps each call's caller as the hook's return address: no unwind
// before attach. An unwind through libunwind made ~50 rt_sigprocmask
// system calls per logged allocation, which the program's own count
// (--kernel syscalls) then showed as its. Counted up to the shim's
// ProcessStart: later, a thread's first stacks may still go through
// libunwind, until the recording's unwind rules have its frames.
TEST(EarlyAllocations, TheLogAddsNoSystemCallsToTheProgramsOwn) {
  const std::string path = temp_path("early-syscalls.spoor");
  // rt_sigprocmask calls before the shim's ProcessStart (all of them
  // without the shim), -1 when the recording failed.
  const auto sigprocmask_calls = [&](const std::string& options, std::string* err) {
    const Process p = run("SPOOR_TEST_EARLY_BLOCKS=100 " + kSpoor + " record " + options + " -o " + path +
                          " --kernel=syscalls:rt_sigprocmask -- " + SPOOR_EARLY_ALLOC_MAIN);
    *err = p.err;
    int calls = -1;
    if (p.status != 0) return calls;
    calls = 0;
    bool attached = false;
    each_event(path, [&](const std::string& name, const reader::Event& e) {
      attached |= name == "ProcessStart";
      calls += !attached && name == "SyscallEnter" && str(e, "name") == "rt_sigprocmask";
    });
    return calls;
  };
  std::string err;
  const int untraced = sigprocmask_calls("--no-preload", &err);
  if (err.find("unavailable") != std::string::npos) GTEST_SKIP() << err;
  ASSERT_GE(untraced, 0) << err;
  const int traced = sigprocmask_calls("", &err);
  ASSERT_GE(traced, 0) << err;
  EXPECT_LE(traced, untraced + 2) << "103 allocations logged before attach; " << err;
  fs::remove(path);
}

}  // namespace

namespace {

// A C program needs no libstdc++: what its constructor (the exception
// pool, 72704 bytes, never freed) allocates before attach is the shim's.
TEST(EarlyAllocations, WhatOnlyTheShimsLibrariesAllocatedIsLeftOut) {
  const std::string dir = temp_path("early-c");
  fs::create_directories(dir);
  const std::string path = dir + ".spoor";
  const Process p = run(kSpoor + " record -o " + path + " -- " + SPOOR_IO_MOVES + " " + dir + " < /dev/null");
  ASSERT_EQ(p.status, 0) << p.err;
  int before_attach = 0;
  each_event(path, [&](const std::string& name, const reader::Event& e) {
    if (e.provider->name == "Spoor.Heap" && name == "Alloc") before_attach += u64(e, "stack") == 0;
  });
  fs::remove(path);
  fs::remove_all(dir);
  EXPECT_EQ(before_attach, 0) << "no library of the program's allocates in a constructor";
}

}  // namespace
