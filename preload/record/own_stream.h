// The recorder's own stream: the ProcessExit events of the processes it
// reaps (the traced program, and orphans that re-parent to it as the
// subreaper), and ProcessRunning for those still running at the end,
// written through the core into a ring of its own and drained with the
// others, so every process's end is in the trace.
#ifndef SPOOR_PRELOAD_RECORD_OWN_STREAM_H
#define SPOOR_PRELOAD_RECORD_OWN_STREAM_H

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "spoor/ring.h"
#include "spoor/trace_writer.h"

namespace spoor::record {

class OwnStream {
 public:
  OwnStream() = default;
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  ~OwnStream();

  // Sets up the ring and registers the event. False with *error set.
  bool start(uint32_t cpus, std::string* error);
  // Writes this process's PROCESS, STREAM and metadata blocks.
  void describe(TraceWriter& writer, uint32_t first_stream);

  void process_exited(pid_t pid, int wait_status);
  // `pid` was still running as the recording ended.
  void process_running(pid_t pid);

  const RingView& ring() const { return ring_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> memory_;
  RingView ring_;
};

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_OWN_STREAM_H
