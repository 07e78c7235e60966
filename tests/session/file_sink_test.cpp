// FileSink after a failed write: nothing more is written, even when the
// disk has room again, so the file is what was written before the failure.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <vector>

#include "spoor/host/file_sink.h"
#include "temp_dir.h"

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
