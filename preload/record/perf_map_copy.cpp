#include "perf_map_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace spoor::record {
namespace {

// A SYMBOL_MAP block's text: well under the format's 64 MiB block limit,
// and small enough that a run of blocks waiting to be packed stays small.
constexpr size_t kPieceBytes = 4u << 20;
constexpr off_t kMostBytes = off_t{1} << 30;
constexpr int64_t kSecond = 1'000'000'000;

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

void keep_perf_map(TraceWriter& writer, const std::string& dir, uint32_t pid,
                   int64_t recording_started_realtime_ns, PerfMapsKept& kept) {
  const std::string path = dir + "/perf-" + std::to_string(pid) + ".map";
  auto refuse = [&](const std::string& why) { kept.problems.push_back(path + ": not kept: " + why); };
  // O_NONBLOCK: a FIFO by that name must not hang the recorder.
  Fd file{open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == ENOENT) return;
    refuse(errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
    return;
  }
  struct stat st {};
  if (fstat(file.fd, &st) != 0) return refuse(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return refuse("not a regular file");
  if (st.st_uid != geteuid() && st.st_uid != 0) return refuse("owned by another user (uid " + std::to_string(st.st_uid) + ")");
  if (st.st_size > kMostBytes) return refuse("larger than " + std::to_string(kMostBytes >> 20) + " MiB");
  const int64_t written = int64_t{st.st_mtim.tv_sec} * kSecond + st.st_mtim.tv_nsec;
  if (written < recording_started_realtime_ns - 2 * kSecond) return;  // another process's, long ago
  const std::unique_ptr<char[]> piece(new char[kPieceBytes]);
  uint64_t offset = 0;
  for (;;) {
    size_t have = 0;
    while (have < kPieceBytes) {
      const ssize_t n = read(file.fd, piece.get() + have, kPieceBytes - have);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        refuse(std::string("reading it failed at byte ") + std::to_string(offset + have) + ": " + std::strerror(errno));
        if (have == 0) return;
        break;
      }
      if (n == 0) break;
      have += static_cast<size_t>(n);
    }
    if (have == 0) break;
    writer.symbol_map(pid, format::kSymbolMapPerf, path.data(), path.size(), offset, piece.get(), have);
    offset += have;
    if (have < kPieceBytes) break;
  }
  if (offset == 0) return;
  kept.maps++;
  kept.bytes += offset;
}

}  // namespace spoor::record
