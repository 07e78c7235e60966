// POSIX mapping of trace files. MAP_PRIVATE + PROT_READ: the reader never
// writes, and a private mapping keeps another process's writes (a session
// still appending) from changing bytes we already checked.
#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace spoor::reader {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Reads what a pipe or character device gives until end of file.
bool read_all(int fd, std::vector<uint8_t>& out, int& err) {
  uint8_t buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      return false;
    }
    out.insert(out.end(), buf, buf + n);
  }
}

}  // namespace

Result<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{errno_text(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Error{errno_text(err)};
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{errno_text(EISDIR)};
  }
  MappedFile file;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const size_t size = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return Error{"cannot map it: " + errno_text(err)};
    }
    file.map_ = p;
    file.map_size_ = size;
  } else if (!S_ISREG(st.st_mode)) {
    int err = 0;
    if (!read_all(fd, file.copy_, err)) {
      ::close(fd);
      return Error{errno_text(err)};
    }
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      copy_(std::move(other.copy_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    copy_ = std::move(other.copy_);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
}

std::span<const uint8_t> MappedFile::bytes() const {
  if (map_ != nullptr) return {static_cast<const uint8_t*>(map_), map_size_};
  return {copy_.data(), copy_.size()};
}

}  // namespace spoor::reader
