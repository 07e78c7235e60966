// MappedFile: a whole file's bytes, mapped read-only. Pipes and other files
// that cannot be mapped are read into memory instead.
#ifndef SPOOR_READER_MAPPED_FILE_H
#define SPOOR_READER_MAPPED_FILE_H

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spoor/reader/result.h"

namespace spoor::reader {

class MappedFile {
 public:
  // Fails with strerror's words ("No such file or directory", "Is a
  // directory") when the file cannot be opened, mapped or read.
  static Result<MappedFile> open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const;

 private:
  void release();

  void* map_ = nullptr;  // from mmap, or null
  size_t map_size_ = 0;
  std::vector<uint8_t> copy_;  // when not mapped
};

}  // namespace spoor::reader

#endif  // SPOOR_READER_MAPPED_FILE_H
