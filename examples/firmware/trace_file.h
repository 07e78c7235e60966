// A Spoor trace file on the host, written through semihosting: the core's
// TraceWriter with a sink that hands each piece to SYS_WRITE. Used whole at
// the end of a run (the dump target) or packet by packet while it runs (the
// streaming target).
#ifndef SPOOR_FIRMWARE_TRACE_FILE_H
#define SPOOR_FIRMWARE_TRACE_FILE_H

#include <stdint.h>

#include "spoor/spoor.hpp"

namespace firmware {

// The firmware image's "process" in the trace.
inline constexpr uint32_t kTracePid = 1;

class TraceFile {
 public:
  TraceFile() : writer_(spoor::Sink{this, &TraceFile::sink_write}) {}

  // Creates `path` on the host and writes the file header, the CLOCK block
  // (SysTick's frequency, tick 0 = time 0), the PROCESS and the STREAM of
  // CPU 0. Returns false when the file cannot be created or written.
  bool open(const char* path);

  // Writes every closed packet of `ring`, each preceded by the descriptors
  // of events registered since the last call, and frees them for the
  // writers. Called from the main loop only (one drainer).
  void drain(const spoor::RingView& ring);

  // Closes the open packet, writes what is left, the descriptors of events
  // that were registered but wrote nothing, and STREAM_END with the lost
  // count; closes the file. Call once the events have stopped. Returns
  // false when any write failed.
  bool finish(const spoor::RingView& ring);

  // Events and packets written, and (after finish) what the core lost.
  const spoor::DrainTotals& totals() const { return totals_; }

 private:
  static bool sink_write(void* self, const void* data, size_t size);
  // The descriptors of events registered since the last call, ahead of a
  // packet that may use them; the first failure is kept in totals_.status.
  void write_new_metadata();

  int handle_ = -1;
  spoor::TraceWriter writer_;
  spoor::DrainTotals totals_;
};

}  // namespace firmware

#endif  // SPOOR_FIRMWARE_TRACE_FILE_H
