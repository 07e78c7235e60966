// FileSink after a failed write: nothing more is written, even when the
// disk has room again, so the file is what was written before the failure.
// FileSink and Session where no thread of theirs can start.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <vector>

#include "spoor/host/file_sink.h"
#include "spoor/host/session.h"
#include "temp_dir.h"
#include "test_cgroup.h"

namespace {

using spoor::host::FileSink;

// The file size limit (as a full disk: writes past it fail, with EFBIG)
// for the life of the object, SIGXFSZ ignored meanwhile.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &given_);
    struct sigaction ignore{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, &given_action_);
    const rlimit limit{bytes, given_.rlim_max};
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() { lift(); }
  void lift() {
    setrlimit(RLIMIT_FSIZE, &given_);
    sigaction(SIGXFSZ, &given_action_, nullptr);
  }

 private:
  rlimit given_{};
  struct sigaction given_action_{};
};

TEST(FileSink, WritesNothingMoreAfterAFailedWrite) {
  const std::string path = spoor::test::test_temp_path("sink-limit.spoor");
  FileSink file;
  std::string error;
  ASSERT_TRUE(file.open(path, &error)) << error;
  const spoor::Sink sink = file.sink();
  const std::vector<uint8_t> piece(40 * 1024, 0xAB);  // past the sink's buffer: written at once
  FileSizeLimit limit(100 * 1024);
  EXPECT_TRUE(sink.write(sink.context, piece.data(), piece.size()));
  EXPECT_TRUE(sink.write(sink.context, piece.data(), piece.size()));
  EXPECT_FALSE(sink.write(sink.context, piece.data(), piece.size())) << "past the limit";
  EXPECT_EQ(file.error_number(), EFBIG);
  limit.lift();  // room again: still nothing is written after the failure
  EXPECT_FALSE(sink.write(sink.context, piece.data(), piece.size()));
  EXPECT_FALSE(sink.write(sink.context, piece.data(), 100)) << "small pieces too";
  EXPECT_FALSE(file.close());
  EXPECT_EQ(file.error_number(), EFBIG);
  EXPECT_EQ(file.bytes_written(), 100u * 1024);
  EXPECT_EQ(std::filesystem::file_size(path), 100u * 1024);
}

}  // namespace

namespace {

// Runs `child` in a fork child that has joined `cgroup` (where no thread
// can start) and returns its exit status: 0 when every check held, else
// the number of the first that did not; 99 when it could not join.
int in_cgroup(const spoor::test::TestCgroup& cgroup, int (*child)(const std::string&), const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) _exit(cgroup.join() ? child(path) : 99);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The child's checks: no packing thread starts, the problem is said, and
// the bytes go to the file as they are.
int compress_without_threads(const std::string& path) {
  FileSink file;
  std::string error;
  if (!file.open(path, &error)) return 1;
  file.compress({.enabled = true});
  const std::string& problem = file.compression_problem();
  if (problem.rfind("0 of ", 0) != 0) return 2;
  if (problem.find(" packing threads started (Resource temporarily unavailable): the trace is written "
                   "uncompressed") == std::string::npos)
    return 3;
  const spoor::Sink sink = file.sink();
  const std::vector<uint8_t> piece(1000, 0x5A);
  if (!sink.write(sink.context, piece.data(), piece.size())) return 4;
  if (!file.close()) return 5;
  return file.compression_stats().raw_bytes == 0 ? 0 : 6;
}

}  // namespace

// Under a limit on the number of processes (pids.max) no packing thread
// may start: the sink writes uncompressed and says why, where the
// BlockCompressor's std::thread threw and ended the process.
TEST(FileSink, WithoutAPackingThreadItWritesUncompressedAndSaysWhy) {
  const spoor::test::TestCgroup cgroup("pids", "pids.max", "pids.max", 1);
  if (cgroup.dir().empty()) GTEST_SKIP() << "no pids cgroup can be made here (it takes root and a cgroup file system)";
  const std::string path = spoor::test::test_temp_path("sink-no-threads.spoor");
  EXPECT_EQ(in_cgroup(cgroup, compress_without_threads, path), 0);
  EXPECT_EQ(std::filesystem::file_size(path), 1000u) << "the bytes as they were written";
}

namespace {

int session_without_thread(const std::string& path) {
  std::string error;
  auto session = spoor::host::Session::start({.output_path = path, .providers = "Spoor.Test.Session"}, &error);
  if (session != nullptr) return 1;
  if (error != "cannot start the session's drain thread: Resource temporarily unavailable") return 2;
  // The flag that allows one session at a time is free again.
  return spoor::host::Session::start({.output_path = path + ".2", .providers = "Spoor.Test.Session"}, &error) ==
                 nullptr && error.find("already running") == std::string::npos
             ? 0
             : 3;
}

}  // namespace

// A session whose drain thread cannot start fails to start, with the
// reason, instead of aborting the process.
TEST(Session, ADrainThreadThatCannotStartIsAnError) {
  const spoor::test::TestCgroup cgroup("pids", "pids.max", "pids.max", 1);
  if (cgroup.dir().empty()) GTEST_SKIP() << "no pids cgroup can be made here (it takes root and a cgroup file system)";
  EXPECT_EQ(in_cgroup(cgroup, session_without_thread, spoor::test::test_temp_path("session-no-thread.spoor")), 0);
}
