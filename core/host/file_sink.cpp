// FileSink: buffered small writes, direct large writes, or everything
// through a BlockCompressor.
#include "spoor/host/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace spoor::host {
namespace {
constexpr size_t kBufferBytes = 64 * 1024;
constexpr size_t kDirectBytes = 4096;  // pieces this large skip the buffer
}  // namespace

FileSink::~FileSink() { close(); }

bool FileSink::open(const std::string& path, std::string* error) {
  // "-": a copy of standard output, so that closing the sink ends the
  // stream for a reader on a pipe whoever else holds descriptor 1.
  fd_ = path == "-" ? ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
                    : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    if (error) *error = (path == "-" ? "cannot write to standard output: " : "cannot create '" + path + "': ") +
                        std::string(std::strerror(errno));
    return false;
  }
  buffer_.reserve(kBufferBytes);
  return true;
}

// After a failure nothing more is written: a disk that has room again
// later must not get pieces after a hole. The file ends where the failed
// write stopped, and a reader says where that cuts a block.
bool FileSink::write_all(const void* data, size_t size) {
  if (errno_.load() != 0) return false;
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      int none = 0;
      errno_.compare_exchange_strong(none, errno);
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  return true;
}

void FileSink::compress(const CompressionOptions& options) {
  if (!options.enabled || fd_ < 0) return;
  compressor_ = std::make_unique<BlockCompressor>(
      options, [this](const void* data, size_t size) { return write_all(data, size); });
  const std::string problem = compressor_->start_problem();
  if (!compressor_->running()) {
    compressor_.reset();
    compression_problem_ = problem + ": the trace is written uncompressed";
  } else {
    compression_problem_ = problem;
  }
}

void FileSink::pack_threads(uint32_t threads) {
  if (compressor_) compressor_->use_threads(threads);
}

void FileSink::make_spares_ahead() {
  if (compressor_) compressor_->make_spares_ahead();
}

bool FileSink::flush() {
  if (compressor_) {
    compressor_->flush();
    return errno_ == 0;
  }
  if (buffer_.empty()) return errno_ == 0;
  const bool ok = write_all(buffer_.data(), buffer_.size());
  buffer_.clear();
  return ok && errno_ == 0;
}

bool FileSink::write(const void* data, size_t size) {
  if (fd_ < 0 || errno_.load() != 0) return false;  // after a failure: not packed for nothing either
  if (compressor_) {
    compressor_->write(data, size);
    return errno_ == 0;
  }
  if (size >= kDirectBytes) return flush() && write_all(data, size);
  if (buffer_.size() + size > kBufferBytes && !flush()) return false;
  const auto* p = static_cast<const uint8_t*>(data);
  buffer_.insert(buffer_.end(), p, p + size);
  return true;
}

bool FileSink::write_thunk(void* self, const void* data, size_t size) {
  return static_cast<FileSink*>(self)->write(data, size);
}

bool FileSink::close() {
  if (fd_ < 0) return errno_ == 0;
  if (compressor_) {
    compressor_->finish();  // its failures are in errno_
    compression_ = compressor_->stats();
    compressor_.reset();
  }
  const bool ok = flush();
  if (::close(fd_) != 0 && errno_ == 0) errno_ = errno;
  fd_ = -1;
  return ok && errno_ == 0;
}

}  // namespace spoor::host
