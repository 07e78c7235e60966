// The trace file a session writes: small blocks are gathered in a buffer,
// packet data (tens of KiB) goes from the ring to the kernel with no copy.
#ifndef SPOOR_HOST_FILE_SINK_H
#define SPOOR_HOST_FILE_SINK_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "spoor/trace_writer.h"

namespace spoor::host {

class FileSink {
 public:
  FileSink() = default;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  ~FileSink();

  // Creates (truncates) `path`. Returns false with *error set.
  bool open(const std::string& path, std::string* error);
  // Sends buffered bytes to the kernel. Returns false on a write error.
  bool flush();
  // Flushes and closes. Returns false if any write failed.
  bool close();
  // The errno of the first failed write, 0 if none.
  int error_number() const { return errno_; }

  // The sink for TraceWriter.
  Sink sink() { return Sink{this, &FileSink::write_thunk}; }

 private:
  static bool write_thunk(void* self, const void* data, size_t size);
  bool write(const void* data, size_t size);
  bool write_all(const void* data, size_t size);

  int fd_ = -1;
  int errno_ = 0;
  std::vector<uint8_t> buffer_;
};

}  // namespace spoor::host

#endif  // SPOOR_HOST_FILE_SINK_H
